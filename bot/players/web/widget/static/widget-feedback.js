// Arca support widget: 👍 / 👎 under a finished answer, POST api/threads/<thread>/feedback (loaded
// before widget.js).
"use strict";

window.ArcaWidgetFeedback = (function () {
  const { el, thumbIcon } = window.ArcaWidgetDom;

  // `run` (the `done` event's run_id, or the history's) names the answer, so a vote on an earlier
  // answer goes to that answer; without it the server takes the thread's latest.
  // `person` (optional): the "상담원 연결 / Talk to a person" button beside the thumbs; a press sends the
  // request words, which the server turns into an escalation with no model call.
  function attach(li, run, { thread, t, headers, person }) {
    const row = el("div", "feedback");
    row.append(el("span", "feedback-label", t("helpful")));
    for (const [vote, emoji] of [["up", "👍"], ["down", "👎"]]) {
      const button = el("button", "feedback-" + vote);
      button.append(thumbIcon());
      button.title = emoji;
      button.type = "button";
      button.setAttribute("aria-label", vote === "up" ? "👍 helpful" : "👎 not helpful");
      button.addEventListener("click", async () => {
        const body = { vote };
        if (run) body.run = run;
        if (vote === "down") {
          const comment = window.prompt(t("comment_prompt"), "");
          if (comment) body.comment = comment.slice(0, 500);
        }
        const response = await fetch(`api/threads/${thread}/feedback`, {
          method: "POST",
          headers: headers({ "Content-Type": "application/json" }),
          credentials: "same-origin",
          body: JSON.stringify(body),
        });
        if (response.ok) {
          row.dataset.vote = vote;
          row.querySelector(".feedback-label").textContent = t("rated");
        }
      });
      row.append(button);
    }
    if (person) {
      const ask = el("button", "person-request", t("person"));
      ask.type = "button";
      ask.addEventListener("click", () => {
        ask.disabled = true;
        person();
      });
      row.append(ask);
    }
    li.append(row);
  }

  return { attach };
})();
