// Arca support widget: the player token is kept for this tab only (sessionStorage), never in the
// address bar; a sandboxed frame without storage keeps it in memory (loaded before widget.js).
"use strict";

window.ArcaWidgetToken = (function () {
  const TOKEN_KEY = "arca-support-token";
  function storedToken() {
    try {
      return sessionStorage.getItem(TOKEN_KEY);
    } catch (e) {
      return null; // storage blocked (e.g. a sandboxed frame): the token lives in memory only
    }
  }
  function storeToken(token) {
    try {
      sessionStorage.setItem(TOKEN_KEY, token);
    } catch (e) {
      /* in memory only */
    }
  }

  return { storedToken, storeToken };
})();
