"""The start-up heap frozen out of the collector's walks (`bot.heap.freeze_startup_heap`), once per process;
the serving process leaves every other collection to the collector (wave 4 removed `QuietCollections`),
with full collections spaced out again (`FULL_COLLECTION_EVERY`)."""

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
    # A second freeze would move every object made since into the permanent generation; the count can
    # only fall, when another thread frees frozen objects meanwhile (the full suite: 993,473 → 993,471).
    assert gc.get_freeze_count() <= frozen


def test_full_collections_are_spaced_out_once_the_startup_heap_is_frozen() -> None:
    from bot.heap import FULL_COLLECTION_EVERY

    before = gc.get_threshold()
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    try:
        freeze_startup_heap()
        assert gc.get_threshold() == (700, 10, FULL_COLLECTION_EVERY) and FULL_COLLECTION_EVERY > 10
    finally:
        gc.set_threshold(*before)
