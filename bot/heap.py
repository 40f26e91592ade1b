"""The process's heap and the cyclic garbage collector: what start-up built is frozen out of its walks.

Start-up builds ~200k long-lived objects (the embedding models, Chroma, tables, modules): they are
frozen once (`freeze_startup_heap`), so no collection walks them again. Frozen objects are still freed by
reference counting; only their cycles are never collected.

Wave 3 also held full collections back while conversations ran (`QuietCollections`: the oldest
generation's threshold out of reach, a full collection in quiet moments). Wave 4 removed it: on the
200-conversation burst, interleaved in one process, 7 runs each, it did not pay for itself against the lag
goal (worst lag above the same run's idle lag 21–110 ms with it, 56–86 without; 60–94 conversations/s
with it, 64–105 without; CPU per conversation 5.9–7.5 ms with it, 5.6–6.9 without). What stays is a
plain threshold: full collections ten times rarer than CPython's default (`FULL_COLLECTION_EVERY`), which
freezing had made far more frequent than CPython means them to be.
"""

from __future__ import annotations

import gc

FULL_COLLECTION_EVERY = 100
"""Collections of the middle generation between two full ones (CPython's default: 10).

CPython also waits for the long-lived objects to grow by a quarter since the last full collection, so
that full collections stay rare on a big heap; freezing start-up's ~217,000 objects takes them out of
that count, leaving ~4,000 long-lived objects before a burst, so the quarter is reached at once and a full
collection ran every 10 middle ones. In the 200-conversation burst one ran in 2 of 4 bursts, stopping the
loop 18 and 428 ms (interleaved with 100 here: none in 4 bursts; 2026-12-07, load 6–10, `bench.burst_ab
--variants full-gc-every-10,base`). Young collections still free the cycles that die young; only cycles that
reached the oldest generation wait ten times longer for theirs."""


def freeze_startup_heap() -> None:
    """Put what start-up built out of the cyclic garbage collector's reach, once per process, and space
    full collections out again (`FULL_COLLECTION_EVERY`). A full collection walks every tracked object,
    and a burst of runs allocates enough to trigger one: 150 ms with the event loop stopped, measured."""
    if gc.get_freeze_count() == 0:
        gc.collect()
        gc.freeze()
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)
