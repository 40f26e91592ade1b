"""What one model reply asks of a run, read without touching the run (`bot.engine.steps`), and how the
loop ended (`Stop`). The run applies an outcome in one place (`bot.engine.apply`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.engine.results import StopReason
from bot.llm.base import ToolCall


@dataclass(frozen=True)
class Stop:
    """How the loop ended: the answer, why, and an error text for the logs."""

    answer: str
    reason: StopReason
    error: str | None = None
    answer_from_trace: bool = False
    """The trace holds what the answer needs although the loop stopped (a read repeated with its result
    in hand): the synthesis writes the answer, `answer` is its fallback."""


@dataclass(frozen=True)
class Answer:
    """The model answered without a tool call: final, unless the player added something meanwhile or a
    call the player's message requires is missing (then the answer is sent back once)."""

    final: str
    """What the player gets if the answer stands (native mode: a fallback for an empty reply)."""
    message: dict[str, Any]
    """The assistant message as the thread keeps it when the answer does not stand."""
    reasoning: str | None = None
    in_messages: bool = False
    """JSON mode: the reply is already in the run's messages (it is persisted, not added again)."""


@dataclass(frozen=True)
class CallTools:
    """The model asked for tool calls (native: a batch; JSON mode: one), carried by `message`."""

    calls: list[ToolCall]
    message: dict[str, Any]
    reasoning: str | None = None


@dataclass(frozen=True)
class Unreadable:
    """JSON mode: the reply is not a JSON action; the exact decoder error goes back to the model."""

    message: dict[str, Any]
    hint: str | None
    error: str | None
    reasoning: str | None = None


StepOutcome = Answer | CallTools | Unreadable
"""What `read_native` / `read_json` make of one model reply."""
