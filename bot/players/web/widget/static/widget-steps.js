// Arca support widget: how a run's tool calls are drawn (loaded before widget.js). A player sees each
// tool's own status line (`label`) and how it ended in plain words (`outcome`); the operator's debug view
// (ARCA_WEB_DEBUG and #debug=1) shows the raw step detail of seed 000's protocol.
"use strict";

window.ArcaWidgetSteps = (function () {
  const { el } = window.ArcaWidgetDom;

  function create({ t, lang, debug }) {
    function pretty(value) {
      if (value === null || value === undefined) return "";
      if (typeof value === "string") return value;
      return JSON.stringify(value, null, 2);
    }

    // What a player sees of a tool call: the tool's own status line and how it ended, in plain words.
    function label(data) {
      return (data.label && data.label[lang()]) || t("working");
    }

    function statusCard(turn, data) {
      const card = el("div", "tool running");
      card.append(el("span", "label", label(data)), el("span", "state", t("running")));
      card.dataset.iteration = String(data.iteration);
      card.setAttribute("role", "status");
      turn.tools.appendChild(card);
      turn.cards.push(card);
      return card;
    }

    function finishStatusCard(turn, data) {
      const card =
        turn.cards.find((c) => c.classList.contains("running") && c.dataset.iteration === String(data.iteration)) ||
        statusCard(turn, data);
      const outcome = data.outcome || (data.error ? "failed" : "done");
      card.classList.remove("running");
      card.classList.add(outcome);
      card.querySelector(".state").textContent = t("outcome_" + outcome);
    }

    // The operator's debug view: the raw step detail of seed 000's protocol.
    function toolCard(turn, data) {
      if (!debug()) return statusCard(turn, data);
      const card = el("details", "tool running");
      const summary = el("summary");
      summary.append(el("span", "name", data.tool_name), el("span", "state", t("running")));
      const body = el("div", "body");
      body.append(el("h3", null, t("args")), el("pre", "args", pretty(data.tool_args)));
      const why = turn.reasoning[data.iteration];
      if (why) body.append(el("h3", null, t("reasoning")), el("pre", "reasoning", why));
      card.append(summary, body);
      card.dataset.tool = data.tool_name;
      card.dataset.iteration = String(data.iteration);
      turn.tools.appendChild(card);
      turn.cards.push(card);
      return card;
    }

    function finishCard(turn, data) {
      if (!debug()) return finishStatusCard(turn, data);
      const card =
        turn.cards.find((c) => c.classList.contains("running") && c.dataset.tool === data.tool_name && c.dataset.iteration === String(data.iteration)) ||
        toolCard(turn, data);
      card.classList.remove("running");
      card.classList.add(data.error ? "error" : "ok");
      const secs = typeof data.iter_elapsed === "number" ? ` · ${data.iter_elapsed.toFixed(2)}s` : "";
      card.querySelector(".state").textContent = (data.error ? t("failed") : t("done")) + secs;
      const body = card.querySelector(".body");
      body.append(el("h3", null, t("observation")), el("pre", "observation", data.error || data.observation || ""));
    }

    return { toolCard, finishCard, label };
  }

  return { create };
})();
