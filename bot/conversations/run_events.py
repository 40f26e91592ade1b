"""`RunEvents`: an in-process pub/sub of the runs' events by thread id, so a watcher (the staff console)
follows a run of any channel handled in this process (Discord, console, web) as it goes.

Publishing never waits: each subscriber has a bounded queue, and a subscriber too slow to keep up loses
its oldest events (counted in `dropped`) rather than slowing a run down. Nobody subscribed to a thread
costs one dict lookup per event.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from bot.conversations.hooks import RunHooks, RunInfo
from tools.base import Actor

DEFAULT_QUEUE_SIZE = 512
"""Events a subscriber may lag behind before its oldest ones are dropped."""


@dataclass(frozen=True)
class RunEvent:
    """One event of a run: an engine event, `AnswerText` or `RunEnd`, and the run it belongs to."""

    run_id: str
    event: Any
    actor: Actor | None = None
    """Whom the run answers: a watcher cleans the run's steps as that person's own stream would be."""
    locale: str = "ko"
    """The conversation's language (of the message the run answers)."""


@dataclass(frozen=True)
class AnswerText:
    """A piece of the answer the output guard released (never the model's raw delta)."""

    text: str


@dataclass(frozen=True)
class RunEnd:
    """The run is over: it delivered its (guarded) answer, or failed or was stopped (the apology or the
    stop notice the channel shows). Every run ends with exactly one."""

    answer: str


class Subscription:
    """The events published on one thread since `RunEvents.subscribe`; iterate it or `get()` one."""

    def __init__(self, thread_id: str, maxsize: int) -> None:
        self.thread_id = thread_id
        self.queue: asyncio.Queue[Any] = asyncio.Queue(maxsize)
        self.dropped = 0

    def put(self, item: Any) -> None:
        if self.queue.full():
            self.queue.get_nowait()
            self.dropped += 1
        self.queue.put_nowait(item)

    async def get(self) -> Any:
        return await self.queue.get()

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._items()

    async def _items(self) -> AsyncIterator[Any]:
        while True:
            yield await self.queue.get()


class RunEvents:
    """Subscribers by thread id; `publish` hands an item to each subscriber of its thread."""

    def __init__(self, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        self.queue_size = queue_size
        self._subscribers: dict[str, set[Subscription]] = {}

    def publish(self, thread_id: str, item: Any) -> None:
        for subscription in self._subscribers.get(thread_id, ()):
            subscription.put(item)

    def subscribers(self, thread_id: str) -> int:
        return len(self._subscribers.get(thread_id, ()))

    @contextlib.asynccontextmanager
    async def subscribe(self, thread_id: str) -> AsyncIterator[Subscription]:
        """`async with hub.subscribe(thread) as events: async for item in events: ...`"""
        subscription = Subscription(thread_id, self.queue_size)
        self._subscribers.setdefault(thread_id, set()).add(subscription)
        try:
            yield subscription
        finally:
            found = self._subscribers.get(thread_id)
            if found is not None:
                found.discard(subscription)
                if not found:
                    del self._subscribers[thread_id]


class LiveFeed(RunHooks):
    """The hook that publishes every run's events, answer text and end on `RunEvents` by thread id."""

    def __init__(self, hub: RunEvents) -> None:
        self.hub = hub

    async def on_event(self, run: RunInfo, event: Any) -> None:
        self.hub.publish(run.thread_id, RunEvent(run.run_id, event, run.actor, run.locale))

    async def on_answer_text(self, run: RunInfo, text: str) -> None:
        self.hub.publish(run.thread_id, RunEvent(run.run_id, AnswerText(text), run.actor, run.locale))

    async def on_run_end(self, run: RunInfo, answer: str) -> None:
        self.hub.publish(run.thread_id, RunEvent(run.run_id, RunEnd(answer), run.actor, run.locale))
