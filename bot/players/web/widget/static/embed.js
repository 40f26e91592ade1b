// Arca support widget loader: <script src="https://support.example.com/static/embed.js"
//   data-token="PLAYER_TOKEN" data-thread="main" data-lang="ko" defer></script>
// adds a chat button that opens the widget in an iframe served by the bot. No other code is loaded.
"use strict";

(function () {
  const script = document.currentScript;
  if (!script) return;
  const base = new URL(".", new URL(script.src, location.href)).href.replace(/static\/$/, "");
  const origin = new URL(base).origin;
  const hash = new URLSearchParams();
  for (const key of ["token", "thread", "lang"]) {
    const value = script.dataset[key];
    if (value) hash.set(key, value);
  }

  // Both the chat window and its button float in the bottom-right corner above the game page.
  function float(el, style) {
    Object.assign(el.style, { position: "fixed", right: "16px", zIndex: "2147483000" }, style);
  }

  const frame = document.createElement("iframe");
  frame.src = base + (hash.toString() ? "#" + hash : "");
  frame.title = script.dataset.title || "Arca Online Support";
  frame.setAttribute("allow", "clipboard-write");
  float(frame, {
    bottom: "84px",
    width: "min(400px, calc(100vw - 32px))",
    height: "min(640px, calc(100vh - 110px))",
    border: "1px solid #dde1ea",
    borderRadius: "14px",
    boxShadow: "0 12px 32px rgba(20, 24, 40, 0.18)",
    background: "#fff",
    display: "none",
  });

  const button = document.createElement("button");
  button.type = "button";
  // A speech-bubble icon drawn as SVG nodes (no emoji font or image needed).
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "26");
  svg.setAttribute("height", "26");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", "M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4H4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z");
  path.setAttribute("fill", "currentColor");
  svg.appendChild(path);
  button.appendChild(svg);
  button.setAttribute("aria-label", frame.title);
  button.setAttribute("aria-expanded", "false");
  float(button, {
    bottom: "16px",
    width: "56px",
    height: "56px",
    borderRadius: "50%",
    border: "0",
    background: "#3a4fd6",
    color: "#fff",
    display: "grid",
    placeItems: "center",
    cursor: "pointer",
    boxShadow: "0 6px 16px rgba(20, 24, 40, 0.25)",
  });
  button.addEventListener("click", () => {
    const open = frame.style.display === "none";
    frame.style.display = open ? "block" : "none";
    button.setAttribute("aria-expanded", String(open));
    if (open) frame.focus();
  });

  function mount() {
    document.body.append(frame, button);
  }
  if (document.body) mount();
  else document.addEventListener("DOMContentLoaded", mount);

  // The game page refreshes a short-lived token without reloading the chat.
  window.ArcaSupport = {
    setToken(token) {
      frame.contentWindow && frame.contentWindow.postMessage({ type: "arca-token", token }, origin);
    },
    open() {
      if (frame.style.display === "none") button.click();
    },
  };
})();
