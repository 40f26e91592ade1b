"""The process's heap and the cyclic garbage collector: what start-up built is frozen out of its walks.

Start-up builds ~200k long-lived objects (the embedding models, Chroma, tables, modules): they are
frozen once (`freeze_startup_heap`), so no collection walks them again. Frozen objects are still freed by
reference counting; only their cycles are never collected.

Wave 3 also held full collections back while conversations ran (`QuietCollections`: the oldest
generation's threshold out of reach, a full collection in quiet moments). Wave 4 removed it: on the
200-conversation burst, interleaved in one process, 7 runs each, it did not pay for itself against the lag
goal (worst lag above the same run's idle lag 21–110 ms with it, 56–86 without; 60–94 conversations/s
with it, 64–105 without; CPU per conversation 5.9–7.5 ms with it, 5.6–6.9 without).
"""

from __future__ import annotations

import gc


def freeze_startup_heap() -> None:
    """Put what start-up built out of the cyclic garbage collector's reach, once per process. A full
    collection walks every tracked object, and a burst of runs allocates enough to trigger one: 150 ms
    with the event loop stopped, measured."""
    if gc.get_freeze_count() == 0:
        gc.collect()
        gc.freeze()
