"""The one fake clock of the tests: time moves only when a test moves it, or when someone sleeps on it."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta


class FakeClock:
    """Call it for the time. `now` is a `datetime` (a wall clock, as tools read it) or a float (a monotonic
    clock, as the renderer and the run budget read it); `advance` and `sleep` move it by seconds either way."""

    def __init__(self, now: datetime | float = 0.0) -> None:
        self.now = now

    def __call__(self) -> datetime | float:
        return self.now

    def advance(self, seconds: float) -> None:
        if isinstance(self.now, datetime):
            self.now = self.now + timedelta(seconds=seconds)
        else:
            self.now += seconds

    async def sleep(self, seconds: float) -> None:
        """An `asyncio.sleep` that takes no real time: the clock jumps, other tasks get one turn."""
        self.advance(max(seconds, 0.0))
        await asyncio.sleep(0)
