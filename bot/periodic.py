"""A round of work done every few seconds for as long as its owner runs.

The SLA watch, the Discord incident-notice poster, the staff outbox and the web server's resumer of
cut compensation runs each poll the store on a timer. They share this: started and stopped with their
owner (starting twice starts one task; a task that ended is started again), a round that raises is
logged and tried again at the next one, and the count of rounds done is there for tests to wait on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any


class Periodic:
    """Awaits `work` every `every` seconds in one task, from `start()` until `stop()`."""

    def __init__(
        self,
        work: Callable[[], Awaitable[Any]],
        every: float,
        *,
        name: str,
        log: logging.Logger,
        failure: str,
    ) -> None:
        self._work, self.every, self.name = work, every, name
        self._log, self._failure = log, failure
        self._task: asyncio.Task[None] | None = None
        self.rounds = 0
        """Rounds ended so far, failed ones included."""

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if not self.running:
            self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            try:
                await self._work()
            except Exception:  # the database or a channel is away: the next round tries again
                self._log.exception(self._failure)
            self.rounds += 1
            await asyncio.sleep(self.every)
