"""The process's heap and the cyclic garbage collector, kept out of the event loop's busy moments.

Start-up builds ~200k long-lived objects (the embedding models, Chroma, tables, modules): they are
frozen once (`freeze_startup_heap`), so no collection walks them again. What a burst of conversations
keeps alive meanwhile (each run's messages, events and rows: ~65k objects for 200 runs) is promoted to
the oldest generation, and a full collection of it stopped the loop for 60 ms in the middle of the burst
(measured, `bench.loop_stalls`). A serving process therefore takes the full collections itself
(`QuietCollections`): when no conversation is running, or at the latest every `FULL_AT_LEAST_S` seconds;
the young generations are collected as usual. Frozen objects are still freed by reference counting;
only their cycles are never collected.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable

from bot.periodic import Periodic

log = logging.getLogger(__name__)

CHECK_EVERY_S = 5.0
FULL_AT_LEAST_S = 300.0
"""A full collection runs at least this often, busy or not (one pause of tens of ms every 5 minutes)."""
NO_AUTOMATIC_FULL = 1_000_000_000
"""The oldest generation's threshold that keeps the collector from starting a full collection itself."""


def freeze_startup_heap() -> None:
    """Put what start-up built out of the cyclic garbage collector's reach, once per process. A full
    collection walks every tracked object, and a burst of runs allocates enough to trigger one: 150 ms
    with the event loop stopped, measured."""
    if gc.get_freeze_count() == 0:
        gc.collect()
        gc.freeze()


class QuietCollections:
    """While started, full collections run in a quiet moment (nothing `busy`) or every
    `FULL_AT_LEAST_S`, never in the middle of whatever allocates; `stop()` gives them back to the
    collector."""

    def __init__(
        self,
        busy: Callable[[], bool],
        *,
        every: float = CHECK_EVERY_S,
        at_least: float = FULL_AT_LEAST_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.busy, self.at_least, self.clock = busy, at_least, clock
        self.full_collections = 0
        self._last = clock()
        self._thresholds: tuple[int, int, int] | None = None
        self._periodic = Periodic(
            self.round, every, name="quiet-collections", log=log, failure="a full collection failed"
        )

    def start(self) -> None:
        if self._thresholds is None:
            self._thresholds = gc.get_threshold()
            young, middle, _ = self._thresholds
            gc.set_threshold(young, middle, NO_AUTOMATIC_FULL)
        self._last = self.clock()
        self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None

    async def round(self) -> None:
        """One check: a full collection when nothing is running (and something was promoted since the
        last one), or when the last one is `at_least` seconds old."""
        now = self.clock()
        due = now - self._last >= self.at_least
        if not due and (self.busy() or gc.get_count()[2] == 0):  # busy, or nothing promoted since
            return
        gc.collect()
        self._last = self.clock()
        self.full_collections += 1
