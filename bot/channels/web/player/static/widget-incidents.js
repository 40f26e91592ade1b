// Arca support widget: the notices of the open incidents that concern this player, as a banner above the
// conversation (GET api/notices in the widget's language, asked again every `poll` seconds, so an update
// shows and a closed incident's banner goes). Text is set with textContent only (loaded before widget.js).
"use strict";

window.ArcaWidgetIncidents = (function () {
  function create({ headers, lang, t }) {
    const box = document.getElementById("incidents");
    let timer = null;
    let poll = 20;

    function draw(notices) {
      const items = notices.map((n) => {
        const p = document.createElement("p");
        p.className = "incident";
        p.dataset.incident = String(n.id);
        p.dataset.version = String(n.version);
        const head = document.createElement("strong");
        head.textContent = t("incident_head");
        const body = document.createElement("span");
        body.textContent = n.text;
        p.append(head, body);
        return p;
      });
      box.replaceChildren(...items);
      box.hidden = items.length === 0;
    }

    async function refresh() {
      clearTimeout(timer);
      try {
        const response = await fetch("api/notices?lang=" + encodeURIComponent(lang()), {
          headers: headers(),
          credentials: "same-origin",
        });
        if (response.ok) {
          const data = await response.json();
          draw(Array.isArray(data.notices) ? data.notices : []);
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
