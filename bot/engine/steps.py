"""What one model reply asks of a run, read without touching the run: native tool calls are a batch; a
JSON-mode reply is read as one action (repaired where unambiguous). The outcome is typed (`Answer`,
`CallTools`, `Unreadable`); the run applies it in one place (`AgentRun.apply` in `bot.engine.agent`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.engine.calls import CallIds
from bot.engine.parsing import FINAL_ANSWER, read_action
from bot.llm.base import LLMResult, ToolCall

DRAFT_WITHHELD = "(draft answer withheld)"
EMPTY_REPLY = "(empty reply)"


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


def read_native(response: LLMResult, ids: CallIds, empty_answer: Callable[[], str]) -> StepOutcome:
    """A native reply: tool calls (ids made unique in the thread), or the answer (`empty_answer()` if blank)."""
    calls = response.tool_calls
    reasoning = response.reasoning_content or (response.content if calls else None)
    if not calls:
        text = response.content or ""
        message = {"role": "assistant", "content": text or DRAFT_WITHHELD}
        return Answer(final=text or empty_answer(), message=message, reasoning=reasoning)
    calls = [ids.unique(c) for c in calls]
    message = {
        "role": "assistant",
        "content": response.content or None,
        "tool_calls": [c.to_message() for c in calls],
    }
    return CallTools(calls=calls, message=message, reasoning=reasoning)


def read_json(response: LLMResult, ids: CallIds) -> StepOutcome:
    """A JSON-mode reply: one action (a tool call or the final answer), or what made it unreadable."""
    content = response.content or ""
    reading = read_action(content)
    action = reading.action
    reasoning = (action.reasoning if action else "") or response.reasoning_content or None
    message = {"role": "assistant", "content": content or EMPTY_REPLY}
    if action is None:
        return Unreadable(message=message, hint=reading.hint, error=reading.error, reasoning=reasoning)
    if action.kind == FINAL_ANSWER:
        return Answer(final=action.answer, message=message, reasoning=reasoning, in_messages=True)
    arguments = action.args if isinstance(action.args, str) else json.dumps(action.args, ensure_ascii=False)
    call = ToolCall(id=ids.new(), name=action.tool, arguments=arguments)
    return CallTools(calls=[call], message=message, reasoning=reasoning)
