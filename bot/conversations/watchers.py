"""Hooks that watch one thread for a while (replay's turn): the thread's conversation runs tell them what
every `RunHooks` is told, and an agent run that is not a conversation run but works in the thread
(`/ops draft`) is given their event callback explicitly. The process's own hooks (metrics) never see those."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bot.conversations.hooks import FanOut, RunHooks, RunInfo


class ThreadWatchers:
    """The hooks registered per thread id, in the order they were registered."""

    def __init__(self) -> None:
        self._by_thread: dict[str, list[RunHooks]] = {}

    @contextmanager
    def watch(self, thread_id: str, hooks: RunHooks) -> Iterator[None]:
        """`hooks` watch the thread's runs that start inside the block (and those runs to their end)."""
        self._by_thread.setdefault(thread_id, []).append(hooks)
        try:
            yield
        finally:
            watching = self._by_thread[thread_id]
            watching.remove(hooks)
            if not watching:
                del self._by_thread[thread_id]

    def of(self, thread_id: str) -> tuple[RunHooks, ...]:
        """Who watches `thread_id` now (a run takes this once, when it starts)."""
        return tuple(self._by_thread.get(thread_id, ()))

    def events_for(self, run: RunInfo) -> Callable[[Any], Awaitable[None]] | None:
        """The engine-event callback of an agent run in `run.thread_id` that is not a conversation run
        (`/ops draft`): its events reach the thread's watchers only. None when nobody watches."""
        watching = self.of(run.thread_id)
        if not watching:
            return None
        fan_out = FanOut(watching)

        async def on_event(event: Any) -> None:
            await fan_out.on_event(run, event)

        return on_event
