// Arca support widget: the notices of the open incidents that concern this player, as a banner above the
// conversation. The server pushes them (GET api/notices/stream: a `notices` event at once and at every
// change, within about a second); GET api/notices, asked again every `poll` seconds, is the fallback while
// the stream is down. Text is set with textContent only (loaded after widget-sse.js, before widget.js).
"use strict";

window.ArcaWidgetIncidents = (function () {
  function create({ headers, lang, t }) {
    const box = document.getElementById("incidents");
    let timer = null;
    let poll = 20;
    let stream = null; // { lang, controller, live } of the push stream (`live`: it has sent its list)
    let retry = null;
    let backoff = 2000;

    // Each notice is one line until tapped (a <details>), and one is open at a time: on a phone three
    // open notices took ~40 % of the screen and hid the conversation. The open one stays open when the
    // list is drawn again (a push, a poll).
    function draw(notices) {
      const open = box.querySelector("details.incident[open]");
      const keep = open ? open.dataset.incident : null;
      const items = notices.map((n) => {
        const item = document.createElement("details");
        item.className = "incident";
        item.dataset.incident = String(n.id);
        item.dataset.version = String(n.version);
        const line = document.createElement("summary");
        const head = document.createElement("strong");
        head.textContent = t("incident_head");
        const body = document.createElement("span");
        body.textContent = n.text;
        line.append(head, body);
        item.append(line);
        if (String(n.id) === keep) item.open = true;
        item.addEventListener("toggle", () => {
          if (!item.open) return;
          for (const other of box.querySelectorAll("details.incident[open]")) {
            if (other !== item) other.open = false;
          }
        });
        return item;
      });
      box.replaceChildren(...items);
      box.hidden = items.length === 0;
    }

    async function listen() {
      clearTimeout(retry);
      const want = lang();
      if (stream && stream.lang === want) return;
      if (stream) stream.controller.abort();
      const mine = { lang: want, controller: new AbortController(), live: false };
      stream = mine;
      try {
        const response = await fetch("api/notices/stream?lang=" + encodeURIComponent(want), {
          headers: headers(),
          credentials: "same-origin",
          signal: mine.controller.signal,
        });
        if (response.ok && response.body) {
          await window.ArcaWidgetSse.read(response, {
            onId: () => {},
            onEvent: (event, data) => {
              if (event !== "notices" || !Array.isArray(data.notices)) return;
              backoff = 2000;
              mine.live = true;
              draw(data.notices);
            },
          });
        }
      } catch (e) {
        /* the fallback poll keeps the banner current; listen again below */
      }
      if (stream !== mine) return; // replaced by a stream in another language
      stream = null;
      retry = setTimeout(listen, backoff);
      backoff = Math.min(backoff * 2, 60000);
    }

    async function refresh() {
      clearTimeout(timer);
      listen();
      if (stream && stream.live) {
        timer = setTimeout(refresh, poll * 1000); // the stream keeps the banner current: no need to ask
        return;
      }
      try {
        const response = await fetch("api/notices?lang=" + encodeURIComponent(lang()), {
          headers: headers(),
          credentials: "same-origin",
        });
        if (response.ok) {
          const data = await response.json();
          // A stream that went live meanwhile drew a list at least as new: never put an older one back.
          if (!(stream && stream.live)) draw(Array.isArray(data.notices) ? data.notices : []);
          if (data.poll > 0) poll = data.poll;
        }
      } catch (e) {
        /* keep what is shown and ask again later */
      }
      timer = setTimeout(refresh, poll * 1000);
    }

    return { refresh };
  }

  return { create };
})();
