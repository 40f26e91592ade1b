"""Typed events the engine emits while it runs (seed 000's event table), one union type `Event`.

Channels translate these into UI (status line, tool cards, streamed message edits); the replay
runner delivers scripted interrupts from the `iteration` done callback.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

log = logging.getLogger(__name__)


class ThinkingEvent(BaseModel):
    """Before each loop LLM call (`start`) and after its reply, before any tool runs (`done`)."""

    type: Literal["thinking"] = "thinking"
    status: Literal["start", "done"]
    iteration: int
    reasoning: str | None = None
    """The model's reasoning for this step (JSON `reasoning`, else `reasoning_content`, else content)."""


class IterationEvent(BaseModel):
    """One tool call: `start` before it runs, `done` with its observation after."""

    type: Literal["iteration"] = "iteration"
    status: Literal["start", "done"]
    iteration: int
    tool_name: str
    tool_args: dict[str, Any] | str = Field(default_factory=dict)
    """Parsed arguments, or the raw text when the model sent arguments that are not a JSON object."""
    call_id: str
    observation: str | None = None
    """What the model reads back (done only)."""
    code: str | None = None
    """The tool's result code, e.g. `ISSUED`, `AMOUNT_OVER_LIMIT` (done only)."""
    error: str | None = None
    """Set when the call failed (result code `ERROR`): unknown tool, bad arguments, exception."""
    iter_elapsed: float | None = None
    """Seconds the tool took (done only)."""


class AnswerEvent(BaseModel):
    """`channel="step"`, `status="start"`: the loop signalled its final answer.
    `channel="answer"`: synthesis streaming `start`, each `delta` (with `content`), `done`."""

    type: Literal["answer"] = "answer"
    channel: Literal["step", "answer"] = "answer"
    status: Literal["start", "delta", "done"]
    content: str | None = None


class CompactEvent(BaseModel):
    """The ContextGuard compacted the conversation to fit the context window."""

    type: Literal["compact"] = "compact"
    original_messages: int
    kept_messages: int
    summarized: bool = True
    """False when the summary call failed and older messages were dropped instead."""


class PhaseEvent(BaseModel):
    """A preparatory phase, e.g. `selecting_tools` when more tools than the threshold are registered."""

    type: Literal["phase"] = "phase"
    phase: str
    total_tools: int | None = None
    selected: list[str] | None = None


class InjectEvent(BaseModel):
    """User messages that arrived during the run were injected as one message opened by `INTERRUPT_PREFIX`."""

    type: Literal["inject"] = "inject"
    content: str
    messages: list[str] = Field(default_factory=list)


class DoneEvent(BaseModel):
    """The tool loop finished (synthesis may still follow)."""

    type: Literal["done"] = "done"
    answer: str
    iterations: int
    usage: dict[str, int] = Field(default_factory=dict)
    elapsed: float
    stopped_reason: str = "final_answer"
    """`final_answer`, or why the loop stopped early (`max_iterations`, `budget`, `repetition`, ...)."""
    error: str | None = None
    """What ended the run early, in words for the logs (e.g. which call kept failing)."""


Event = Annotated[
    ThinkingEvent | IterationEvent | AnswerEvent | CompactEvent | PhaseEvent | InjectEvent | DoneEvent,
    Field(discriminator="type"),
]
"""Any engine event; discriminated by `type`."""

event_adapter: TypeAdapter[Any] = TypeAdapter(Event)
"""Validates / serialises events of any kind (`event_adapter.validate_python({...})`)."""

EventCallback = Callable[[Any], Awaitable[None] | None]


class Emitter:
    """Calls the event callback (sync or async). A failing UI callback is logged, never fatal;
    assertion errors (test and replay expectations) propagate."""

    def __init__(self, callback: EventCallback | None) -> None:
        self._callback = callback

    async def __call__(self, event: Any) -> None:
        if self._callback is None:
            return
        try:
            outcome = self._callback(event)
            if inspect.isawaitable(outcome):
                await outcome
        except AssertionError:
            raise
        except Exception:
            log.exception("event callback failed for %s", event.type)
