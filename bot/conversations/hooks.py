"""`RunHooks`: one protocol for whatever watches a conversation run (as openai-agents' `RunHooks`): the
run starts, each engine event, each model call, each channel send or edit, each piece of guarded answer
text, the run ends. The staff live feed (`bot.conversations.run_events`), the metrics (`MetricsHooks`),
the web stream's step events, tests and replay are hooks; the run calls them all through one `FanOut`,
in order.

Below the run, a model reports its own calls through `bot.llm.hooks` (the model layer knows no run):
`FanOut.model_for` turns those reports into `on_llm_call`."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Protocol

from bot.llm.function import FunctionLLM, forward, forward_stream
from tools.base import Actor


@dataclass(frozen=True)
class RunInfo:
    """Which run a hook is told about."""

    run_id: str
    thread_id: str
    actor: Actor
    """Whom the run answers."""
    locale: str
    """The conversation's language (of the message the run answers)."""
    started_at: datetime | None = None


@dataclass(frozen=True)
class LLMCall:
    """One finished model call of a run (as `bot.llm.hooks` reports it)."""

    purpose: str
    """`loop`, `synthesis`, `select_tools`, `compact`, …"""
    seconds: float
    first_token: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error_kind: str | None = None


@dataclass(frozen=True)
class SurfaceCall:
    """One call of a run's `Renderer` on its channel: a message sent, edited or reacted to."""

    op: str
    """`send`, `edit`, `react`, …"""
    seconds: float
    ok: bool = True


class RunHooks:
    """Override the moments you watch; the others cost nothing (`FanOut` skips them)."""

    async def on_run_start(self, run: RunInfo) -> None:
        """The run took its turn and is about to call the engine."""

    async def on_event(self, run: RunInfo, event: Any) -> None:
        """An engine event (`bot.engine.events`), in the order the engine emits them."""

    def on_llm_call(self, run: RunInfo, call: LLMCall) -> None:
        """A model call of the run ended. Told at once and never awaited: the run does not wait for it.
        The run's model is wrapped to report its calls only when some hook overrides this."""

    def on_surface_call(self, run: RunInfo, call: SurfaceCall) -> None:
        """A send or edit of the run's reply on its channel ended (ok or failed). Told at once, never
        awaited."""

    async def on_answer_text(self, run: RunInfo, text: str) -> None:
        """A piece of the answer the output guard released (never the model's raw delta)."""

    async def on_run_end(self, run: RunInfo, answer: str) -> None:
        """Exactly once per run: the delivered answer, or the apology or stop notice shown instead."""


class EventHook(RunHooks):
    """A plain callable (sync or async) that wants every engine event: a test, replay, a metric."""

    def __init__(self, callback: Callable[[Any], Awaitable[None] | None]) -> None:
        self.callback = callback

    async def on_event(self, run: RunInfo, event: Any) -> None:
        outcome = self.callback(event)
        if inspect.isawaitable(outcome):
            await outcome


def _overriding(hooks: Iterable[RunHooks], name: str) -> tuple[Any, ...]:
    base = getattr(RunHooks, name)
    return tuple(getattr(h, name) for h in hooks if getattr(type(h), name) is not base)


class FanOut:
    """Calls each hook in turn, only those that override a moment (a run's events are many)."""

    def __init__(self, hooks: Sequence[RunHooks]) -> None:
        self.hooks = tuple(hooks)
        self._start = _overriding(self.hooks, "on_run_start")
        self._event = _overriding(self.hooks, "on_event")
        self._text = _overriding(self.hooks, "on_answer_text")
        self._end = _overriding(self.hooks, "on_run_end")
        self._llm = _overriding(self.hooks, "on_llm_call")
        self._surface = _overriding(self.hooks, "on_surface_call")

    def surface_calls(self, run: RunInfo) -> Callable[[SurfaceCall], None] | None:
        """What the run's `Renderer` reports each channel call to (None when no hook watches them)."""
        if not self._surface:
            return None
        hooks = self._surface

        def report(call: SurfaceCall) -> None:
            for hook in hooks:
                hook(run, call)

        return report

    def model_for(self, run: RunInfo, llm: Any) -> Any:
        """`llm`, reporting each call to the hooks that watch model calls (`llm` itself if none does)."""
        if not self._llm:
            return llm
        return FunctionLLM(
            partial(forward, llm),
            stream_function=partial(forward_stream, llm),
            abilities=llm.abilities,
            observer=_CallReport(run, self._llm),
        )

    async def on_run_start(self, run: RunInfo) -> None:
        for hook in self._start:
            await hook(run)

    async def on_event(self, run: RunInfo, event: Any) -> None:
        for hook in self._event:
            await hook(run, event)

    async def on_answer_text(self, run: RunInfo, text: str) -> None:
        for hook in self._text:
            await hook(run, text)

    async def on_run_end(self, run: RunInfo, answer: str) -> None:
        for hook in self._end:
            await hook(run, answer)


class _CallReport:
    """An `LLMObserver` that hands each finished call to the run's hooks."""

    def __init__(self, run: RunInfo, hooks: tuple[Any, ...]) -> None:
        self.run = run
        self.hooks = hooks

    def on_llm_call(self, purpose: str, seconds: float, **details: Any) -> None:
        call = LLMCall(purpose, seconds, **details)
        for hook in self.hooks:
            hook(self.run, call)


class RunMetrics(Protocol):
    """What `MetricsHooks` feeds (`bot.observability.ArcaMetrics` is one)."""

    def observe_event(self, event: Any) -> None: ...

    def record_edit_latency(self, seconds: float, *, op: str = "edit", ok: bool = True) -> None: ...


class MetricsHooks(RunHooks):
    """The metrics as a run hook: engine events counted, each channel send and edit timed. (Model calls
    are metered where the model is built, so calls outside a run are counted too.)"""

    def __init__(self, metrics: RunMetrics) -> None:
        self.metrics = metrics

    async def on_event(self, run: RunInfo, event: Any) -> None:
        self.metrics.observe_event(event)

    def on_surface_call(self, run: RunInfo, call: SurfaceCall) -> None:
        self.metrics.record_edit_latency(call.seconds, op=call.op, ok=call.ok)
