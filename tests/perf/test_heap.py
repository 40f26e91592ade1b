"""The start-up heap frozen out of the collector's walks (`bot.heap.freeze_startup_heap`), once per process;
the serving process leaves every other collection to the collector (wave 4 removed `QuietCollections`)."""

from __future__ import annotations

import gc

from bot.heap import freeze_startup_heap


def test_the_startup_heap_is_frozen_once_per_process() -> None:
    freeze_startup_heap()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    gc.collect()  # what a later call would collect and freeze: nothing is frozen again
    [object() for _ in range(10)]
    freeze_startup_heap()
    assert gc.get_freeze_count() == frozen
