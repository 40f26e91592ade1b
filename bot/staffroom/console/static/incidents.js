// Staff console, incidents: the declare form's scope parts and CSV file, and the live progress of a
// compensation run (server-sent events of /staff/incidents/<id>/live, read from the store).
"use strict";

(function () {
  const form = document.getElementById("declare");
  if (form) {
    const parts = form.querySelectorAll(".scope-part");
    const show = () => {
      const kind = (form.querySelector('input[name="scope"]:checked') || {}).value;
      for (const part of parts) part.hidden = part.dataset.scope !== kind;
    };
    for (const radio of form.querySelectorAll('input[name="scope"]')) radio.addEventListener("change", show);
    show();
    const file = document.getElementById("players-file");
    file.addEventListener("change", () => {
      const chosen = file.files && file.files[0];
      if (!chosen) return;
      const reader = new FileReader();
      reader.onload = () => {
        document.getElementById("players-csv").value = String(reader.result);
      };
      reader.readAsText(chosen);
    });
    // A form over the server's limit would be refused with a page of its own: say so here instead,
    // with everything typed still in place.
    const limit = Number(form.dataset.maxBytes || 0);
    form.addEventListener("submit", (event) => {
      const size = new Blob([new URLSearchParams(new FormData(form)).toString()]).size;
      if (!limit || size <= limit) return;
      event.preventDefault();
      let note = document.getElementById("declare-too-large");
      if (!note) {
        note = document.createElement("p");
        note.id = "declare-too-large";
        note.className = "flash bad";
        note.setAttribute("role", "alert");
        form.prepend(note);
      }
      note.textContent = form.dataset.tooLarge;
    });
  }

  const box = document.getElementById("progress");
  if (box && box.dataset.live) {
    const bar = document.getElementById("progress-bar");
    const state = document.getElementById("progress-state");
    const number = (n) => Number(n).toLocaleString("ko-KR");
    const source = new EventSource(box.dataset.live);
    source.addEventListener("progress", (event) => {
      const data = JSON.parse(event.data);
      bar.max = data.total || 1;
      bar.value = data.done;
      for (const span of box.querySelectorAll("[data-k]")) span.textContent = number(data[span.dataset.k]);
      if (data.finished) {
        source.close();
        state.textContent = box.dataset.doneText;
        box.dataset.finished = "1";
      }
    });
  }
})();
