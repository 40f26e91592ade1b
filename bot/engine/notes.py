"""The engine's notes to the model, tagged: what the output guard must never deliver, read from the run
itself instead of copied into the guard's patterns as wording.

A note is tagged where the engine writes it: a message it adds for the model carries `ENGINE_NOTE`
(stripped before the API sees it, like `pinned`), and a tool result it wrote — a refused call, a reused
result, a repeated failure, a call made instead — is told apart from the tool's own text by its `reason`
or by what the engine added to the observation. `engine_notes(result)` hands them to the fact check
(`FactContext.model_notes`), which drops a sentence that quotes one (`fact.engine_note`)."""

from __future__ import annotations

from typing import Any

from bot.engine.grounding import NOT_RUN_REASONS
from bot.engine.observations import observation_text
from bot.engine.unasked import NOT_ASKED

ENGINE_NOTE = "engine_note"
"""The key a message the engine writes for the model carries (True)."""


def tagged(message: dict[str, Any]) -> dict[str, Any]:
    """`message` marked as an engine note."""
    return {**message, ENGINE_NOTE: True}


def engine_notes(result: Any) -> list[str]:
    """The texts the engine wrote for the model in this run (AgentResult)."""
    notes = [
        str(m.get("content") or "")
        for m in getattr(result, "messages", None) or []
        if isinstance(m, dict) and m.get(ENGINE_NOTE)
    ]
    for o in getattr(result, "tool_outcomes", None) or []:
        data = o.result.data if isinstance(o.result.data, dict) else {}
        if data.get("reason") in NOT_RUN_REASONS or data.get("reason") == NOT_ASKED:
            notes.append(o.observation)
            continue
        own = observation_text(o.name, o.result)
        added = o.observation.replace(own, " ") if own else o.observation
        if added.strip() and added != o.observation:
            notes.append(added)
    return [n for n in notes if n.strip()]
