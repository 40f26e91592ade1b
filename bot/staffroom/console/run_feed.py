"""The runs of a thread of another channel (Discord, console) handled in this process, as the staff
console's "Live run" panel draws a web run: the same seed-000 `{id, channel, payload}` events.

They come from the `RunEvents` hub of `Conversations` (engine events, the guarded answer text, the end
of the run). A web run is left to the web's own stream (`live._web_runs`), which its player also reads.
Steps are cleaned as a web run's are (`StepCleaner`: other people's personal data in tool arguments,
results and errors; the whole output guard on the model's reasoning), for the person the run answers.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bot.conversations.run_events import AnswerText, RunEnd, RunEvent
from bot.guards.output import OutputGuard
from bot.web_kit.sse.step_cleaning import StepCleaner
from bot.web_kit.sse.wire import answer_payload, done_payload, step_payload
from tools.base import Actor

GuardFor = Callable[[Actor | None, str], Awaitable[OutputGuard]]
"""The output guard for a run's actor and language (their own phone and e-mail stay visible)."""


@dataclass
class _Run:
    run_id: str
    started: float
    skip: bool = False
    """A web run: its own stream feeds the page."""
    seq: int = 0
    iterations: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    answering: bool = False
    shown: str = ""
    cleaner: StepCleaner | None = None


class HubRunFeed:
    """Turns one thread's `RunEvent`s into the page's run events; `is_web_run()` says a web stream is open,
    `guard_for` gives the guard a run's steps are cleaned with."""

    def __init__(
        self,
        is_web_run: Callable[[], bool],
        guard_for: GuardFor,
        *,
        protected_texts: tuple[str, ...] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.is_web_run = is_web_run
        self.guard_for = guard_for
        self.protected_texts = protected_texts
        self.clock = clock
        self.run: _Run | None = None

    async def feed(self, item: RunEvent) -> list[dict[str, Any]]:
        run = self.run
        if run is None or run.run_id != item.run_id:
            run = self.run = _Run(item.run_id, self.clock(), skip=self.is_web_run())
        if run.skip:
            if isinstance(item.event, RunEnd):
                self.run = None
            return []
        out = []
        for channel, payload in self._wire(run, item.event):
            if channel == "step":
                if run.cleaner is None:
                    guard = await self.guard_for(item.actor, item.locale)
                    run.cleaner = StepCleaner(guard, protected_texts=self.protected_texts)
                payload = await run.cleaner.clean(channel, payload)
            out.append(self._event(run, channel, payload))
        return out

    def _wire(self, run: _Run, event: Any) -> list[tuple[str, dict[str, Any]]]:
        if isinstance(event, AnswerText):
            out = [] if run.answering else [("answer", answer_payload("start"))]
            run.answering = True
            run.shown += event.text
            return [*out, ("answer", answer_payload("delta", event.text))]
        if isinstance(event, RunEnd):
            # The guard releases an answer's tail (or all of a short one) when it finishes; a replaced
            # answer (a broken stream) is shown from `done.answer`, as for a web run.
            out = [] if run.answering else [("answer", answer_payload("start"))]
            rest = event.answer[len(run.shown) :] if event.answer.startswith(run.shown) else ""
            if rest:
                out.append(("answer", answer_payload("delta", rest)))
            out.append(("answer", answer_payload("done")))
            elapsed = self.clock() - run.started
            self.run = None
            done = done_payload(event.answer, run.iterations, run.usage, elapsed, run.run_id or None)
            return [*out, ("done", done)]
        kind = getattr(event, "type", None)
        if kind == "thinking" and event.status == "start":
            run.iterations = max(run.iterations, event.iteration)
        if kind == "done":
            run.iterations = event.iterations
            run.usage = dict(event.usage)
            return []
        if kind == "answer" and getattr(event, "channel", None) == "answer":
            if event.status == "start" and not run.answering:
                run.answering = True
                return [("answer", answer_payload("start"))]
            return []  # the model's raw deltas: the guarded text comes as `AnswerText`
        wire = step_payload(event)
        return [] if wire is None else [wire]

    @staticmethod
    def _event(run: _Run, channel: str, payload: dict[str, Any]) -> dict[str, Any]:
        run.seq += 1
        return {"id": f"{run.run_id or 'run'}-{run.seq}", "channel": channel, "payload": payload}


async def hub_runs(
    conv: Any, thread_id: str, is_web_run: Callable[[], bool]
) -> AsyncIterator[tuple[str, Any]]:
    """The page's run events of each non-web run of `thread_id` in this process (`conv`: the app's
    `Conversations`), from now on."""
    protected = (conv.system_prompt,)

    async def guard_for(actor: Actor | None, locale: str) -> OutputGuard:
        if actor is None:  # nobody's own data: every phone and e-mail is hidden
            return OutputGuard(thread_id=thread_id, locale=locale, protected_texts=protected)
        return await OutputGuard.for_actor(
            conv.store, actor, thread_id=thread_id, locale=locale, protected_texts=protected
        )

    feed = HubRunFeed(is_web_run, guard_for, protected_texts=protected)
    async with conv.run_events.subscribe(thread_id) as events:
        async for item in events:
            if isinstance(item, RunEvent):
                for value in await feed.feed(item):
                    yield "run", value
