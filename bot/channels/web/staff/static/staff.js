// Staff console: refresh the parts of a page marked data-poll (conversation list, a conversation's
// history) every 3 s, keeping keyboard focus; nothing else needs script.
(function () {
  "use strict";
  var INTERVAL = 3000;
  function refresh(el) {
    fetch(el.getAttribute("data-poll"), { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null || el.contains(document.activeElement)) return;
        if (el.innerHTML.trim() !== html.trim()) el.innerHTML = html;
      })
      .catch(function () {});
  }
  document.addEventListener("DOMContentLoaded", function () {
    var els = document.querySelectorAll("[data-poll]");
    if (!els.length) return;
    setInterval(function () {
      if (document.hidden) return;
      els.forEach(refresh);
    }, INTERVAL);
  });
})();
