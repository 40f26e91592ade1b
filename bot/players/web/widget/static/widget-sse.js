// Arca support widget: the SSE wire format read from a fetch body (EventSource cannot POST or send a
// bearer token). Loaded before widget.js.
"use strict";

window.ArcaWidgetSse = (function () {
  // Calls `onId(id)` for each event with data and an id, then `onEvent(event, payload)` with its JSON
  // data (an event whose data is not JSON is skipped); resolves when the body ends.
  async function read(response, { onId, onEvent }) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = "message";
        let id = null;
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") event = val;
          else if (field === "data") data.push(val);
          else if (field === "id") id = val;
        }
        if (!data.length) continue;
        if (id) onId(id);
        let payload;
        try {
          payload = JSON.parse(data.join("\n"));
        } catch (e) {
          continue;
        }
        onEvent(event, payload);
      }
    }
  }

  return { read };
})();
