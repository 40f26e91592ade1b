"""Rate limits of the web channel: messages per identity and per IP address in a sliding window.

Who counts against an address depends on who is asking: anonymous visitors share their address's
budget (`ARCA_WEB_RATE_LIMIT_IP`), while signed-in players — vouched for by the game's server, and often
many behind one address (a PC방, a campus, a mobile carrier's NAT), exactly when an incident brings them
all at once — are limited by their own identity, plus a much larger budget for all signed-in players of
one address (`ARCA_WEB_RATE_LIMIT_IP_SIGNED`).

Written by hand (thirty lines): the limit lives in this one process beside the run registry, so a
sliding window of timestamps is all it takes, where the FastAPI rate-limit packages bring a storage
layer and decorators we would not use.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass


class SlidingWindowLimiter:
    """At most `limit` hits per key within any `window` seconds."""

    def __init__(self, limit: int, window: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._hits: dict[str, deque[float]] = {}

    def retry_after(self, key: str) -> float:
        """Seconds until `key` may hit again (0: now). Does not count a hit."""
        now = self._clock()
        hits = self._hits.get(key)
        if hits is None:
            return 0.0
        while hits and hits[0] <= now - self.window:
            hits.popleft()
        if not hits:
            del self._hits[key]
            return 0.0
        if len(hits) < self.limit:
            return 0.0
        return hits[0] + self.window - now

    max_keys = 10_000
    """Above this many tracked keys, keys whose hits have all expired are dropped (bounded memory)."""

    def hit(self, key: str) -> None:
        if len(self._hits) >= self.max_keys and key not in self._hits:
            self.prune()
        self._hits.setdefault(key, deque()).append(self._clock())

    def prune(self) -> None:
        cutoff = self._clock() - self.window
        for key in [k for k, hits in self._hits.items() if not hits or hits[-1] <= cutoff]:
            del self._hits[key]

    def __len__(self) -> int:
        return len(self._hits)


class ByteBudget:
    """At most `limit` bytes per key within any `window` seconds (the anonymous uploads of one address)."""

    max_keys = 10_000

    def __init__(self, limit: int, window: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._spent: dict[str, deque[tuple[float, int]]] = {}

    def take(self, key: str, size: int) -> bool:
        """Count `size` bytes against `key` and True, or False (nothing counted) when they do not fit."""
        now = self._clock()
        spent = self._spent.get(key)
        if spent is None:
            if len(self._spent) >= self.max_keys:
                self._prune(now)
            spent = self._spent.setdefault(key, deque())
        while spent and spent[0][0] <= now - self.window:
            spent.popleft()
        if sum(n for _, n in spent) + size > self.limit:
            return False
        spent.append((now, size))
        return True

    def _prune(self, now: float) -> None:
        for key in [k for k, v in self._spent.items() if not v or v[-1][0] <= now - self.window]:
            del self._spent[key]


@dataclass(frozen=True)
class WebLimits:
    """The web channel's limiters (one set per app)."""

    identity: SlidingWindowLimiter
    """Per identity: a signed-in player's id or an anonymous visitor's cookie."""
    address: SlidingWindowLimiter
    """Per address, for anonymous visitors (all of them behind it together)."""
    signed_address: SlidingWindowLimiter
    """Per address, for signed-in players (all of them behind it together; a much larger budget)."""
    upload_bytes: ByteBudget | None = None
    """Per address, the bytes anonymous visitors upload (`ARCA_ATTACHMENT_ADDRESS_BYTES`)."""

    def of(self, kind: str, key: str, address: str) -> list[tuple[SlidingWindowLimiter, str]]:
        """The limits one request counts against: its identity's and its address's for its kind."""
        per_address = self.signed_address if kind == "player" else self.address
        return [(self.identity, key), (per_address, address)]


def check_all(limits: list[tuple[SlidingWindowLimiter, str]]) -> int:
    """Whole seconds to wait (for `Retry-After`), or 0 after counting a hit on every limiter.

    All limits are checked before any is counted, so a refused request costs no budget."""
    wait = max((limiter.retry_after(key) for limiter, key in limits), default=0.0)
    if wait > 0:
        return max(1, math.ceil(wait))
    for limiter, key in limits:
        limiter.hit(key)
    return 0
