// Arca support widget: between runs, one wait for the thread's next stream is kept open (a staff reply
// to a taken-over thread arrives as a short stream of its own) and followed like an answer. Loaded
// before widget.js.
"use strict";

window.ArcaWidgetIdle = (function () {
  const WAIT = 25; // seconds the server holds each wait (it allows 30)
  const FIRST_DELAY = 1000;
  const MAX_DELAY = 30000;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  function discard(response) {
    if (response && response.body) response.body.cancel().catch(() => {});
  }

  // `url(wait)`: the wait's address; `headers()`: the bearer headers, never a Last-Event-ID (a finished
  // stream would be replayed at once, again and again); `follow(response)`: read a stream like an
  // answer; `saw(response)`: note its X-Arca-Cursor (the wait's next `after=`); `reading()`: whether a
  // stream is being read; `unauthorized()`: the token was refused.
  function create({ url, headers, follow, saw, reading, unauthorized }) {
    const seen = new Set();
    let generation = 0;
    let running = false;
    let stopped = false;
    let phase = "off"; // "waiting" | "sleeping" | "reading"
    let waiting = null; // the AbortController of the wait in flight

    // True the first time a response's run (`X-Arca-Run`) is seen: a run is drawn once, whoever got it.
    function claim(response) {
      const run = response.headers.get("X-Arca-Run");
      if (!run) return true;
      if (seen.has(run)) return false;
      seen.add(run);
      return true;
    }

    async function loop(mine) {
      const current = () => mine === generation && !stopped;
      let delay = FIRST_DELAY;
      while (current() && !reading()) {
        const controller = new AbortController();
        waiting = controller;
        phase = "waiting";
        let response = null;
        try {
          response = await fetch(url(WAIT), { headers: headers(), credentials: "same-origin", signal: controller.signal });
        } catch (e) {
          response = null; // aborted, or the network failed
        } finally {
          if (waiting === controller) waiting = null;
        }
        if (!current()) return discard(response);
        if (response && (response.status === 200 || response.status === 204)) saw(response);
        if (response && response.status === 204) {
          delay = FIRST_DELAY;
          continue;
        }
        if (response && response.status === 401) {
          stopped = true;
          return unauthorized();
        }
        if (response && response.status === 200 && !reading() && claim(response)) {
          delay = FIRST_DELAY;
          phase = "reading";
          await follow(response);
          continue;
        }
        // An error, or a run already drawn (still open): wait before asking again.
        discard(response);
        phase = "sleeping";
        await sleep(delay);
        delay = Math.min(delay * 2, MAX_DELAY);
      }
    }

    // Start the loop unless it runs (after loading the history, and after each run the player started).
    function start() {
      if (running || stopped) return;
      running = true;
      const mine = ++generation;
      loop(mine).finally(() => {
        if (mine === generation) {
          running = false;
          phase = "off";
        }
      });
    }

    // The player sends a message: end a wait (not a stream being read; the run's end starts it again).
    function pause() {
      if (!running || phase === "reading") return;
      generation++;
      running = false;
      phase = "off";
      if (waiting) waiting.abort();
      waiting = null;
    }

    return { start, pause, claim };
  }

  return { create, discard };
})();
