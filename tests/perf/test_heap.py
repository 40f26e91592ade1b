"""Full collections in quiet moments (`bot.heap.QuietCollections`): while started the collector starts no
full collection itself; one runs when nothing is busy and something was promoted, or when the last one
is `at_least` seconds old, busy or not; stopping gives the thresholds back."""

from __future__ import annotations

import gc

from bot.heap import NO_AUTOMATIC_FULL, QuietCollections
from tests.support.clock import FakeClock


def _promote() -> None:
    """Enough young collections that the oldest generation has something pending."""
    gc.collect(1)


async def test_full_collections_wait_for_a_quiet_moment() -> None:
    clock = FakeClock()
    busy = [True]
    before = gc.get_threshold()
    quiet = QuietCollections(lambda: busy[0], every=3600, at_least=300, clock=clock)
    quiet.start()
    try:
        assert gc.get_threshold()[2] == NO_AUTOMATIC_FULL
        assert gc.get_threshold()[:2] == before[:2]  # the young generations are collected as usual
        _promote()
        await quiet.round()
        assert quiet.full_collections == 0  # busy
        busy[0] = False
        await quiet.round()
        assert quiet.full_collections == 1  # quiet, and something was promoted
        await quiet.round()
        assert quiet.full_collections == 1  # nothing promoted since
        busy[0] = True
        _promote()
        clock.advance(299)
        await quiet.round()
        assert quiet.full_collections == 1
        clock.advance(1)
        await quiet.round()
        assert quiet.full_collections == 2  # due: busy or not
    finally:
        await quiet.stop()
    assert gc.get_threshold() == before
