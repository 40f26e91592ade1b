// Arca support widget: talks to /api/chat (seed 000's SSE events) and draws the conversation.
// Every text from the model, the tools or the server is set with textContent: never parsed as HTML.
"use strict";

(function () {
  const TEXT = window.ArcaWidgetText;
  const { el, renderRich } = window.ArcaWidgetDom;

  const INTERRUPT_PREFIX = "[USER INTERRUPT]";
  const $ = (id) => document.getElementById(id);
  const log = $("log");
  const input = $("input");
  const form = $("composer");
  const notice = $("notice");
  const narrow = window.matchMedia("(max-width: 480px)");

  const params = new URLSearchParams(location.hash.slice(1));
  const { storedToken, storeToken } = window.ArcaWidgetToken;
  const state = {
    token: params.get("token") || storedToken(),
    thread: /^[A-Za-z0-9_-]{1,64}$/.test(params.get("thread") || "") ? params.get("thread") : "main",
    lang: params.get("lang") || ((navigator.language || "ko").toLowerCase().startsWith("ko") ? "ko" : "en"),
    identity: null,
    readers: 0, // streams being read (a run's and a staff reply's may be read at once)
    cursor: null, // the last stream number the server told us about (X-Arca-Cursor)
    debug: false, // the operator's step detail (#debug=1, only where the server allows it)
  };
  if (!TEXT[state.lang]) state.lang = "ko";
  if (params.has("token")) {
    // Keep the token out of the address bar, history and any shared link; this tab keeps it for reloads.
    storeToken(params.get("token"));
    params.delete("token");
    history.replaceState(null, "", location.pathname + location.search + (params.toString() ? "#" + params : ""));
  }
  const t = (key, ...args) => {
    const v = TEXT[state.lang][key];
    return typeof v === "function" ? v(...args) : v;
  };
  const attach = window.ArcaWidgetAttach.create({
    composer: form, input, dropZone: document.querySelector("main.chat"), headers, lang: () => state.lang,
  });

  // ---- page text ----------------------------------------------------------------------------------

  function applyLanguage() {
    document.documentElement.lang = state.lang;
    for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
    for (const el of document.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
    // A phone's composer cannot show the keyboard hint whole (and Enter there is the on-screen key).
    if (narrow.matches) input.placeholder = t("placeholder_short");
    for (const el of document.querySelectorAll("[data-i18n-label]")) el.setAttribute("aria-label", t(el.dataset.i18nLabel));
    const lang = $("lang");
    lang.textContent = t("lang_button");
    lang.setAttribute("aria-label", t("lang_label"));
    if (state.identity) {
      $("who").textContent = state.identity.kind === "player" ? t("subtitle_player", state.identity.player_id) : t("subtitle_anon");
    }
    document.title = t("title");
    attach.label();
  }

  function showNotice(text) {
    notice.textContent = text;
    notice.hidden = !text;
  }

  function scrollDown() {
    log.scrollTop = log.scrollHeight;
  }

  // ---- conversation ---------------------------------------------------------------------------------

  function addUser(text, note) {
    const li = el("li", "msg user");
    li.appendChild(el("div", "bubble", text));
    if (note) li.appendChild(el("div", "note", note));
    log.appendChild(li);
    scrollDown();
    return li;
  }

  function addBotText(text) {
    const li = el("li", "msg bot");
    const bubble = el("div", "bubble");
    renderRich(bubble, text);
    li.appendChild(bubble);
    log.appendChild(li);
    return li;
  }

  // Each stream read draws into its own turns (`view.turn`): a run's answer never lands in the bubble of a
  // staff reply still streaming, nor the reverse.
  function newTurn(view) {
    const li = el("li", "msg bot");
    const turn = {
      li,
      status: el("div", "status"),
      tools: el("div", "tools"),
      bubble: el("div", "bubble"),
      footer: el("div", "footer"),
      cards: [],
      reasoning: {},
      text: "",
      finished: false,
    };
    li.append(turn.status, turn.tools, turn.bubble, turn.footer);
    turn.bubble.setAttribute("aria-busy", "true");
    log.appendChild(li);
    view.turn = turn;
    return turn;
  }

  function currentTurn(view) {
    return view.turn && !view.turn.finished ? view.turn : newTurn(view);
  }

  const incidents = window.ArcaWidgetIncidents.create({ headers: () => headers(), lang: () => state.lang, t });
  const steps = window.ArcaWidgetSteps.create({ t, lang: () => state.lang, debug: () => state.debug });
  const { toolCard, finishCard, label } = steps;

  // A staff reply's answer events carry `by: "staff"`: drawn in a bubble of their own, never into the
  // answer of a run the same stream carries; its `done` then has nothing left to draw.
  function staffAnswer(view, data) {
    if (data.status === "start" || !view.staff) {
      const li = el("li", "msg bot");
      view.staff = { li, bubble: el("div", "bubble"), text: "" };
      li.append(view.staff.bubble);
      log.appendChild(li);
    }
    const reply = view.staff;
    if (data.status === "delta") {
      reply.text += data.content || "";
      renderRich(reply.bubble, reply.text);
    } else if (data.status === "done") {
      markStaff(reply.li, data.staff_name);
      view.staff = null;
      view.staffDrawn = true;
    }
    scrollDown();
  }

  function onEvent(view, channel, data) {
    if (channel === "answer" && data.by === "staff") return staffAnswer(view, data);
    if (channel === "done" && data.by === "staff" && view.staffDrawn) {
      view.staffDrawn = false;
      return;
    }
    const turn = channel === "compact" ? null : currentTurn(view);
    switch (channel) {
      case "step":
        if (data.type === "thinking" && data.status === "start") turn.status.textContent = t("thinking");
        else if (data.type === "thinking" && data.status === "done" && data.reasoning) turn.reasoning[data.iteration] = data.reasoning;
        else if (data.type === "iteration" && data.status === "start") {
          toolCard(turn, data);
          turn.status.textContent = state.debug ? `${data.tool_name} ${t("running")}` : label(data) + "…";
        } else if (data.type === "iteration" && data.status === "done") finishCard(turn, data);
        else if (data.type === "answer") turn.status.textContent = t("writing");
        break;
      case "phase":
        turn.status.textContent = t("selecting");
        break;
      case "answer":
        if (data.status === "start") turn.status.textContent = t("writing");
        else if (data.status === "delta") {
          turn.text += data.content || "";
          renderRich(turn.bubble, turn.text);
        } else if (data.status === "done") turn.status.textContent = "";
        break;
      case "compact": {
        const li = el("li", "divider", t("compact", data.original_messages, data.kept_messages));
        li.setAttribute("role", "separator");
        log.appendChild(li);
        break;
      }
      case "inject": {
        let text = data.content || "";
        if (text.startsWith(INTERRUPT_PREFIX)) text = text.slice(INTERRUPT_PREFIX.length).trim();
        turn.tools.appendChild(el("div", "note", t("injected", text)));
        break;
      }
      case "done": {
        if (data.answer && data.answer !== turn.text) {
          turn.text = data.answer;
          renderRich(turn.bubble, data.answer);
        }
        const tokens = (data.usage && data.usage.total_tokens) || 0;
        const staff = data.by === "staff"; // a reply from the support team
        if (staff) markStaff(turn.li, data.staff_name);
        else if (state.debug) turn.footer.textContent = t("footer", data.iterations, tokens, Number(data.elapsed || 0).toFixed(1));
        turn.status.textContent = "";
        turn.bubble.setAttribute("aria-busy", "false");
        turn.finished = true;
        // A notice (a refusal, "staff will answer") is no answer of the bot's to rate.
        if (!data.error && !staff && data.by !== "notice") addFeedback(turn.li, data.run_id);
        break;
      }
    }
    scrollDown();
  }

  function markStaff(li, name) {
    li.classList.add("staff");
    const footer = li.querySelector(".footer") || li.appendChild(el("div", "footer"));
    footer.textContent = name ? t("staff_reply_by", name) : t("staff_reply");
    personTaken(li);
  }

  // A person answered: the "talk to a person" buttons under the answers before theirs would only open
  // another request, so they are switched off (answers the bot gives later keep theirs).
  function personTaken(li) {
    for (const ask of document.querySelectorAll(".person-request")) {
      if (!(li.compareDocumentPosition(ask) & Node.DOCUMENT_POSITION_PRECEDING)) continue;
      ask.disabled = true;
      ask.classList.add("taken");
      ask.title = t("person_taken");
      ask.setAttribute("aria-description", t("person_taken"));
    }
  }

  function addFeedback(li, run) {
    const person = () => send(t("person_words"));
    window.ArcaWidgetFeedback.attach(li, run, { thread: state.thread, t, headers, person });
  }

  // ---- HTTP --------------------------------------------------------------------------------------

  function headers(extra) {
    const h = Object.assign({ "X-Arca-Request": "1" }, extra || {}); // the server refuses state changes without it from other sites
    if (state.token) h["Authorization"] = "Bearer " + state.token;
    return h;
  }

  // The server numbers streams as they start; a wait names the last number we know (`after=`), so a
  // stream that started and ended between two waits (a staff reply) is still handed to us.
  function noteCursor(response) {
    const header = response.headers.get("X-Arca-Cursor");
    const cursor = header === null ? NaN : Number(header);
    if (Number.isInteger(cursor) && (state.cursor === null || cursor > state.cursor)) state.cursor = cursor;
  }

  async function readEvents(response, view) {
    let sawDone = false;
    await window.ArcaWidgetSse.read(response, {
      onId: (id) => (view.lastEventId = id),
      onEvent: (event, payload) => {
        onEvent(view, event, payload);
        if (event === "done") sawDone = true;
      },
    });
    return sawDone;
  }

  async function follow(response) {
    const view = { turn: null, lastEventId: null };
    state.readers++;
    try {
      let attempts = 0;
      for (;;) {
        try {
          await readEvents(response, view);
          return;
        } catch (e) {
          // The connection broke mid-stream: resume after the last event we saw.
          if (++attempts > 5) {
            showNotice(t("lost"));
            return;
          }
          showNotice(t("network"));
          await new Promise((r) => setTimeout(r, 500 * attempts));
          try {
            response = await fetch(`api/threads/${state.thread}/events`, {
              headers: headers(view.lastEventId ? { "Last-Event-ID": view.lastEventId } : {}),
              credentials: "same-origin",
            });
          } catch (err) {
            continue;
          }
          if (response.status !== 200) return;
          showNotice("");
        }
      }
    } finally {
      state.readers--;
      if (view.turn && !view.turn.finished) view.turn.status.textContent = "";
    }
  }

  // Between runs, a staff reply (or a run from another tab) is drawn like an answer.
  const idle = window.ArcaWidgetIdle.create({
    url: (wait) => `api/threads/${state.thread}/events?wait=${wait}` + (state.cursor === null ? "" : `&after=${state.cursor}`),
    headers: () => headers(),
    follow,
    saw: noteCursor,
    reading: () => state.readers > 0,
    unauthorized: () => showNotice(t("token")),
  });

  async function errorText(response) {
    if (response.status === 429) return t("rate", response.headers.get("Retry-After") || "60");
    if (response.status === 401) return t("token");
    if (response.status === 503) return t("no_llm");
    try {
      const body = await response.json();
      return body.message || `HTTP ${response.status}`;
    } catch (e) {
      return `HTTP ${response.status}`;
    }
  }

  async function send(text) {
    idle.pause();
    try {
      await post(text);
    } finally {
      idle.start();
    }
  }

  async function post(text) {
    // A refused file is said in the message's language (Hangul → Korean), like the bot's replies.
    const replyLang = /[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]/.test(text) ? "ko" : text ? "en" : state.lang;
    const files = attach.pending() ? await attach.take(replyLang) : { ids: [], names: [], refusals: [] };
    const bubble = addUser(text);
    for (const name of files.names) bubble.appendChild(el("div", "files", attach.attachedText(name)));
    for (const refusal of files.refusals) bubble.appendChild(el("div", "note", "⚠ " + refusal));
    if (!text && !files.ids.length) return;
    let response;
    try {
      response = await fetch("api/chat", {
        method: "POST",
        headers: headers({ "Content-Type": "application/json" }),
        body: JSON.stringify({ thread: state.thread, message: text, attachments: files.ids }),
        credentials: "same-origin",
      });
    } catch (e) {
      showNotice(t("lost"));
      return;
    }
    if (response.status === 202) {
      bubble.appendChild(el("div", "note", t("joined")));
      return;
    }
    if (!response.ok) {
      bubble.appendChild(el("div", "note", "⚠ " + (await errorText(response))));
      return;
    }
    showNotice("");
    noteCursor(response);
    if (idle.claim(response)) await follow(response);
    else window.ArcaWidgetIdle.discard(response);
  }

  async function loadHistory() {
    const response = await fetch(`api/threads/${state.thread}`, { headers: headers(), credentials: "same-origin" });
    noteCursor(response); // the history holds every stream up to here
    if (response.status !== 200) return;
    const body = await response.json();
    for (const m of body.messages) {
      if (m.role === "user") attach.addUserWithFiles(addUser, m.content, m.files);
      else {
        const li = addBotText(m.content);
        if (m.by === "staff") markStaff(li, m.staff_name);
        else if (m.run) addFeedback(li, m.run);
      }
    }
    scrollDown();
    if (body.running) {
      const live = await fetch(`api/threads/${state.thread}/events`, { headers: headers(), credentials: "same-origin" });
      if (live.status === 200 && idle.claim(live)) follow(live).then(idle.start);
    }
  }

  async function start() {
    applyLanguage();
    try {
      const response = await fetch("api/status", { headers: headers(), credentials: "same-origin" });
      if (!response.ok) {
        showNotice(await errorText(response));
        return;
      }
      const status = await response.json();
      state.identity = status.identity;
      state.debug = status.debug === true && params.get("debug") === "1";
      if (status.max_message_chars) input.maxLength = status.max_message_chars;
      attach.setMax(status.max_attachment_bytes);
      applyLanguage();
      if (!status.llm) showNotice(t("no_llm"));
      incidents.refresh();
      await loadHistory();
      idle.start();
    } catch (e) {
      showNotice(t("lost"));
    }
  }

  // ---- input -------------------------------------------------------------------------------------

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text && !attach.pending()) return;
    input.value = "";
    autosize();
    send(text);
  });

  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  function autosize() {
    input.style.height = "auto";
    input.style.height = Math.min(input.scrollHeight, 160) + "px";
  }
  input.addEventListener("input", autosize);

  narrow.addEventListener("change", applyLanguage);

  $("lang").addEventListener("click", () => {
    state.lang = state.lang === "ko" ? "en" : "ko";
    applyLanguage();
    incidents.refresh();
  });

  // A page that embeds the widget in an iframe may hand over a fresh token.
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent || !event.data || event.data.type !== "arca-token") return;
    if (typeof event.data.token === "string") {
      state.token = event.data.token;
      storeToken(event.data.token);
    }
  });

  start();
})();
