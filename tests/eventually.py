"""Waiting in a test for something that happens "soon" on another task, thread or process.

The bound is generous on purpose: CI runs the suite on a loaded 2-core machine, where a step that takes
20 ms idle can take a second. It only limits how long a broken build hangs; the assertion after the wait
is what the test proves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.polling import poll_until

WITHIN = 15.0
"""Seconds a test waits for something that should happen at once on an idle machine."""


async def eventually(predicate: Callable[[], Any], *, what: str, within: float = WITHIN) -> Any:
    """Poll `predicate()` (sync or async) until it is truthy and return its value; fail the test with
    `what` after `within` seconds."""
    return await poll_until(predicate, within=within, what=what, interval=0.02)
