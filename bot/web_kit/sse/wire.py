"""Seed 000's SSE protocol: which channel each engine event goes out on and its payload, key for key.

| event           | channel   | payload                                                                  |
|-----------------|-----------|--------------------------------------------------------------------------|
| thinking start  | `step`    | `{type: "thinking", status: "start", iteration}`                         |
| thinking done   | `step`    | `{type: "thinking", status: "done", iteration, reasoning}`               |
| iteration start | `step`    | `{type: "iteration", status: "start", iteration, tool_name, tool_args}`  |
| iteration done  | `step`    | `{type: "iteration", status: "done", iteration, tool_name, observation, error, iter_elapsed}` |
| answer signal   | `step`    | `{type: "answer", status: "start"}`                                      |
| answer start    | `answer`  | `{status: "start"}`                                                      |
| answer delta    | `answer`  | `{status: "delta", content}`                                             |
| answer done     | `answer`  | `{status: "done"}`                                                       |
| compact         | `compact` | `{original_messages, kept_messages}`                                     |
| phase           | `phase`   | `{phase: "selecting_tools", total_tools}`                                |
| inject          | `inject`  | `{type: "inject", content}`                                              |
| done            | `done`    | `{answer, iterations, usage, elapsed, run_id, by, staff_name}`           |

Additions to seed 000 (its keys stay, exactly): `done.run_id`, the run whose answer the widget's 👍 / 👎
rates (null for a reply no run produced, e.g. a refusal); `done.by`, who wrote the reply (`bot`, `staff`
or `notice` — a refusal, a failure, the acknowledgement of a message staff will answer) and
`done.staff_name`, the name a staff reply is signed with; `iteration.label` (`{ko, en}`: the tool's own
status line, what a player is shown instead of the tool's name and arguments), and on `iteration` done
`code` (the tool's result code) and `outcome` (`done`, `pending`, `declined` or `failed`: how the call
ended in a player's words, see `outcome_of`). A staff reply's `answer` events also carry `by: "staff"`
and `staff_name` (`staff_outbox`): on a run's open stream they tell it from the run's own answer.

Answer deltas and `done` are not taken from the engine's events: the browser gets the text the output
guard released (see `stream.WebSurface`), so they are built here from plain values.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot.vocabulary.result_codes import ResultCode

CHANNELS = ("step", "answer", "compact", "phase", "inject", "done")


@dataclass(frozen=True)
class WireEvent:
    """One SSE event: `id:` (`<run id>-<seq>`), `event:` (the seed's channel) and `data:` (one JSON object)."""

    id: str
    channel: str
    payload: dict[str, Any]

    def encode(self) -> str:
        data = json.dumps(self.payload, ensure_ascii=False, separators=(",", ":"))
        return f"id: {self.id}\nevent: {self.channel}\ndata: {data}\n\n"


def step_payload(event: Any) -> tuple[str, dict[str, Any]] | None:
    """The seed's channel and payload of an engine event; None for events the web builds itself
    (answer channel, `done`) or does not send."""
    kind = getattr(event, "type", None)
    if kind == "thinking":
        if event.status == "start":
            return "step", {"type": "thinking", "status": "start", "iteration": event.iteration}
        return "step", {
            "type": "thinking",
            "status": "done",
            "iteration": event.iteration,
            "reasoning": event.reasoning,
        }
    if kind == "iteration":
        if event.status == "start":
            return "step", {
                "type": "iteration",
                "status": "start",
                "iteration": event.iteration,
                "tool_name": event.tool_name,
                "tool_args": event.tool_args,
            }
        return "step", {
            "type": "iteration",
            "status": "done",
            "iteration": event.iteration,
            "tool_name": event.tool_name,
            "observation": event.observation,
            "error": event.error,
            "iter_elapsed": None if event.iter_elapsed is None else round(event.iter_elapsed, 4),
            "code": event.code,
            "outcome": outcome_of(event.code, event.error),
        }
    if kind == "answer" and getattr(event, "channel", "answer") == "step":
        return "step", {"type": "answer", "status": "start"}
    if kind == "compact":
        return "compact", {"original_messages": event.original_messages, "kept_messages": event.kept_messages}
    if kind == "phase":
        return "phase", {"phase": event.phase, "total_tools": event.total_tools}
    if kind == "inject":
        return "inject", {"type": "inject", "content": event.content}
    return None


def outcome_of(code: str | None, error: str | None) -> str:
    """How a tool call ended, as a player would put it: `done` (it did what was asked), `pending` (a
    person must approve it), `declined` (a rule or a missing order stopped it: not a green "done") or
    `failed` (an error, or the game's backend could not be read: SOURCE_UNAVAILABLE)."""
    if error or code in (ResultCode.ERROR, ResultCode.SOURCE_UNAVAILABLE):
        return "failed"  # the game's backend could not answer: nothing was decided, not a refusal
    if code in (ResultCode.OK, ResultCode.ISSUED):
        return "done"
    if code == ResultCode.PENDING_APPROVAL:
        return "pending"
    return "declined"


def answer_payload(status: str, content: str | None = None) -> dict[str, Any]:
    if status == "delta":
        return {"status": "delta", "content": content or ""}
    return {"status": status}


def done_payload(
    answer: str,
    iterations: int,
    usage: dict[str, int],
    elapsed: float,
    run_id: str | None = None,
    *,
    by: str | None = None,
    staff_name: str | None = None,
) -> dict[str, Any]:
    """`by` defaults to `bot` for a run's answer and `notice` for a reply no run produced."""
    return {
        "answer": answer,
        "iterations": iterations,
        "usage": dict(usage),
        "elapsed": round(elapsed, 3),
        "run_id": run_id,
        "by": by or ("bot" if run_id else "notice"),
        "staff_name": staff_name,
    }
