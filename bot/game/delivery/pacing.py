"""How fast the outbox may go: the rate cap that protects the game's backend during a wave (a token
bucket, hand-written in a dozen lines: the libraries for it add a dependency for less), and when a
failed post is tried again (exponential backoff with jitter, at least what `Retry-After` asked)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta


class RateCap:
    """At most `rate` takes per second, in bursts of at most `burst` (default: 1/20 s worth); callers
    wait their turn in order."""

    def __init__(self, rate: float, burst: float | None = None, clock: Callable[[], float] = time.monotonic):
        self.rate = rate
        self.burst = burst if burst is not None else max(1.0, rate / 20)
        self._clock = clock
        self._tokens = self.burst
        self._at = clock()
        self._turn = asyncio.Lock()

    async def take(self) -> None:
        async with self._turn:
            while True:
                now = self._clock()
                self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
                self._at = now
                if self._tokens >= 1:
                    self._tokens -= 1
                    return
                await asyncio.sleep((1 - self._tokens) / self.rate)


RETRY_AFTER_MAX_S = 3600.0
"""A `Retry-After` longer than this (a typo, a date far ahead) is read as this."""


@dataclass(frozen=True)
class RetryPolicy:
    """Attempt n (1-based) that failed for a passing reason waits `first_s * 2**(n-1)`, capped at `max_s`,
    jittered down to half ("equal jitter": a wave of failures does not come back at once), and never
    less than `Retry-After`; after `max_attempts` the job is a dead letter."""

    max_attempts: int = 25
    first_s: float = 1.0
    max_s: float = 600.0

    def gives_up(self, attempts: int) -> bool:
        return attempts >= self.max_attempts

    def next_at(
        self, now: datetime, attempts: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> datetime:
        delay = min(self.max_s, self.first_s * 2 ** max(0, attempts - 1))
        delay = delay / 2 + (rng or random).uniform(0, delay / 2)
        if retry_after is not None:
            delay = max(delay, min(retry_after, RETRY_AFTER_MAX_S))  # the game's word over our own cap
        return now + timedelta(seconds=delay)
