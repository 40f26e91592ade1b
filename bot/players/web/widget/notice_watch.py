"""Pushing incident notices to the widget: one watcher per web process reads the incidents' fingerprint
(`store.incidents.revision`) every `WATCH_SECONDS` — a declaration, an update or a close made by any
process (Discord, the console, the staff web console) changes it — and wakes the open notice streams,
each of which then reads its own caller's notices and sends them only if they changed. One read a second
per process, however many widgets are open."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from bot.store import Store

log = logging.getLogger(__name__)

WATCH_SECONDS = 1.0
"""How often the incidents' fingerprint is read: a banner shows a change within about this long."""


class NoticeWatch:
    """Counts the changes it saw (`version`); streams wait for the count to move past the one they know."""

    def __init__(self, store: Store, *, interval: float = WATCH_SECONDS) -> None:
        self._store = store
        self._interval = interval
        self.version = 0
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopped = False

    async def _watch(self) -> None:
        last = None
        while not self._stopped:
            try:
                seen = await self._store.incidents.revision()
            except Exception:  # a database hiccup: the streams keep what they showed; try again
                log.warning("could not read the incidents' revision", exc_info=True)
            else:
                if last is not None and seen != last:
                    self._wake()
                last = seen
            await asyncio.sleep(self._interval)

    def _wake(self) -> None:
        self.version += 1
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def next_change(self, known: int, *, within: float) -> int | None:
        """The version after `known` once there is one (at once if there is already), `known` again after
        `within` s without a change (the caller checks its client is still there), None once stopped."""
        if self._stopped:
            return None
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._watch())
        if self.version == known:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), within)
        return None if self._stopped else self.version

    async def stop(self) -> None:
        """Ends every stream's wait for good (the server stops) and the watcher."""
        self._stopped = True
        self._wake()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
