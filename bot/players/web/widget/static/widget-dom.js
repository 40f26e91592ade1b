// Arca support widget: DOM helpers. Every text from the model, the tools or the server is set with
// textContent, never parsed as HTML (loaded before widget.js).
"use strict";

window.ArcaWidgetDom = (function () {
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // The answers use a little Markdown (bold, code, bullets, headings): drawn as DOM nodes, never as HTML.
  function inline(node, text) {
    const re = /(\*\*[^*\n]+\*\*|`[^`\n]+`)/g;
    let last = 0;
    let m;
    while ((m = re.exec(text))) {
      if (m.index > last) node.appendChild(document.createTextNode(text.slice(last, m.index)));
      const tok = m[0];
      node.appendChild(tok.startsWith("**") ? el("strong", null, tok.slice(2, -2)) : el("code", null, tok.slice(1, -1)));
      last = m.index + tok.length;
    }
    if (last < text.length) node.appendChild(document.createTextNode(text.slice(last)));
  }

  function renderRich(node, text) {
    node.replaceChildren();
    text.split("\n").forEach((line, i) => {
      if (i) node.appendChild(document.createTextNode("\n"));
      let m;
      if ((m = /^\s{0,3}#{1,6}\s+(.*)$/.exec(line))) {
        const strong = el("strong");
        inline(strong, m[1]);
        node.appendChild(strong);
      } else if ((m = /^(\s*)[-*]\s+(.*)$/.exec(line))) {
        node.appendChild(document.createTextNode(m[1] + "• "));
        inline(node, m[2]);
      } else inline(node, line);
    });
  }

  // A drawn thumb, not the 👍 character: a system without an emoji font shows an empty box instead.
  function thumbIcon() {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", "M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.3a2 2 0 0 0 2-1.7l1.4-9a2 2 0 0 0-2-2.3zM7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3");
    svg.append(path);
    return svg;
  }

  return { el, inline, renderRich, thumbIcon };
})();
