// Staff console: live updates pushed by the server over Server-Sent Events (EventSource, same origin, so
// the session cookie goes along). The conversation list and a conversation's history are replaced by the
// server-rendered (escaped) fragments it sends; a web run in progress is drawn event by event, as text.
(function () {
  "use strict";

  // Replace an element's content, but not under the keyboard focus: then on the next focus change.
  function swapper(el) {
    var pending = null;
    el.addEventListener("focusout", function () {
      setTimeout(function () {
        if (pending !== null && !el.contains(document.activeElement)) {
          el.innerHTML = pending;
          pending = null;
        }
      }, 0);
    });
    return function (html) {
      if (el.contains(document.activeElement)) pending = html;
      else if (el.innerHTML.trim() !== html.trim()) el.innerHTML = html;
    };
  }

  function gone(note, key) {
    if (!note) return;
    note.textContent = note.getAttribute(key);
    note.hidden = false;
    note.classList.add("bad");
  }

  // "Show engine records": the history's machinery rows (tool calls, engine notes, drafts) on request;
  // a class on the list, so the server's live fragments keep the choice.
  function machineryToggle() {
    var box = document.getElementById("show-machinery");
    var list = document.getElementById("history");
    if (!box || !list) return;
    function apply() { list.classList.toggle("show-machinery", box.checked); }
    box.addEventListener("change", apply);
    apply();
  }
  machineryToggle();

  function listen(url, handlers) {
    var source = new EventSource(url);
    Object.keys(handlers).forEach(function (name) {
      source.addEventListener(name, function (e) { handlers[name](e.data); });
    });
    source.onerror = function () {
      // CLOSED: the server refused the reconnect (the session ended); otherwise it reconnects itself.
      if (source.readyState === EventSource.CLOSED) gone(document.getElementById("live-note"), "data-gone");
    };
    document.body.setAttribute("data-live-ready", "1");
    return source;
  }

  function runPanel(panel) {
    var list = panel.querySelector(".run-events");
    var answer = panel.querySelector(".run-answer");
    var status = panel.querySelector(".run-status");
    var run = null;
    function label(key) { return panel.getAttribute("data-l-" + key) || key; }
    function line(kind, head, text) {
      var li = document.createElement("li");
      li.className = "ev ev-" + kind;
      var b = document.createElement("strong");
      b.textContent = head;
      li.appendChild(b);
      if (text) {
        var span = document.createElement("span");
        span.textContent = " " + text;
        li.appendChild(span);
      }
      list.appendChild(li);
    }
    function short(value) {
      var text = typeof value === "string" ? value : JSON.stringify(value);
      return text.length > 300 ? text.slice(0, 300) + "…" : text;
    }
    function code(observation) {
      // A tool result starts with its result code: "[OK] …", "[ORDER_NOT_FOUND] …".
      var m = /^\[([A-Z_]+)\]\s*/.exec(observation);
      var li = m ? m[1] + " · " + short(observation.slice(m[0].length)) : short(observation);
      return li;
    }
    return function (data) {
      var ev = JSON.parse(data);
      var id = ev.id.slice(0, ev.id.lastIndexOf("-"));
      var p = ev.payload;
      if (id !== run) {
        run = id;
        list.textContent = "";
        answer.textContent = "";
        panel.setAttribute("data-run", id);
      }
      panel.hidden = false;
      panel.classList.remove("finished");
      status.textContent = "· " + label("running");
      if (ev.channel === "step" && p.type === "thinking" && p.status === "start") {
        line("thinking", label("thinking"), "#" + p.iteration);
      } else if (ev.channel === "step" && p.type === "thinking" && p.reasoning) {
        line("reasoning", label("reasoning"), short(p.reasoning));
      } else if (ev.channel === "step" && p.type === "iteration" && p.status === "start") {
        line("tool", label("tool"), p.tool_name + " " + short(p.tool_args || {}));
      } else if (ev.channel === "step" && p.type === "iteration") {
        line(p.error ? "error" : "result", p.error ? label("error") : label("result"),
          p.tool_name + ": " + (p.error ? short(p.error) : code(p.observation || "")));
      } else if (ev.channel === "inject") {
        line("inject", label("inject"), short(p.content || ""));
      } else if (ev.channel === "compact") {
        line("compact", label("compact"), p.original_messages + " → " + p.kept_messages);
      } else if (ev.channel === "phase") {
        line("phase", label("phase"), String(p.total_tools));
      } else if (ev.channel === "answer" && p.status === "start") {
        answer.textContent = "";
      } else if (ev.channel === "answer" && p.status === "delta") {
        answer.textContent += p.content;
      } else if (ev.channel === "done") {
        if (p.answer) answer.textContent = p.answer;
        panel.classList.add("finished");
        status.textContent = "· " + label("done") + " (" + p.iterations + " " + label("iterations") + ", " +
          p.elapsed + " s)";
      }
    };
  }

  document.addEventListener("DOMContentLoaded", function () {
    // On a phone the menu is one sideways-scrolling row: bring the current page's entry into view.
    var current = document.querySelector(".top nav [aria-current]");
    if (current && current.parentNode.scrollWidth > current.parentNode.clientWidth) {
      current.scrollIntoView({ block: "nearest", inline: "center" });
    }
    var rows = document.querySelector("#conversation-rows[data-live]");
    if (rows) listen(rows.getAttribute("data-live"), { rows: swapper(rows) });
    var history = document.querySelector("#history[data-live]");
    if (!history) return;
    var handedOff = history.getAttribute("data-handed-off") === "1";
    var panel = document.getElementById("live-run");
    listen(history.getAttribute("data-live"), {
      history: swapper(history),
      deliveries: (function () {
        var list = document.getElementById("deliveries");
        var swap = swapper(list);
        return function (html) {
          swap(html);
          list.parentNode.hidden = !html.trim();
        };
      })(),
      run: runPanel(panel),
      state: function (data) {
        var state = JSON.parse(data);
        if (state.handed_off === handedOff) return;
        var box = document.getElementById("reply-text");
        if (box && box.value.trim()) gone(document.getElementById("live-note"), "data-changed");
        else window.location.reload();
      },
    });
  });
})();
