"""Polling a condition until it holds, for the fakes and the tests that wait on them."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any


async def poll_until(
    predicate: Callable[[], Any], *, within: float, what: str, interval: float = 0.01
) -> Any:
    """Poll `predicate()` (sync or async) until it is truthy and return its value; fail the test with
    `what` after `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within}s waiting for {what}")
        await asyncio.sleep(interval)
