"""Switchable faults, so the bot's tests and benches can see a backend that is slow, failing or rude.

Each counted fault (`fail_next`, …) is used up by the requests it hits; `latency_ms` and
`error_rate` hold until changed. `only` limits them to one part of the API (`orders` or `grants`).
"""

from __future__ import annotations

import random
import threading
from typing import Literal

from pydantic import BaseModel, Field

Part = Literal["orders", "grants"]


class Faults(BaseModel):
    latency_ms: int = Field(default=0, ge=0, le=60_000)
    """Added before every answer."""
    error_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    """Share of requests answered 503 (before anything is done)."""
    fail_next: int = Field(default=0, ge=0)
    """The next N requests answer 503 (before anything is done)."""
    timeout_next: int = Field(default=0, ge=0)
    """The next N requests hang for `hang_s` before anything is done (the client times out)."""
    drop_after_commit_next: int = Field(default=0, ge=0)
    """The next N grant or revoke posts are applied, then hang for `hang_s`: the game did it, the
    client never hears so and must retry with the same key."""
    rate_limit_next: int = Field(default=0, ge=0)
    """The next N requests answer 429 with `Retry-After: retry_after_s`."""
    retry_after_s: int = Field(default=1, ge=0, le=3600)
    hang_s: float = Field(default=30.0, ge=0, le=600)
    refuse_next: int = Field(default=0, ge=0)
    """The next N requests answer 422 with `{"error": refuse_reason}`: a refusal the client must not retry."""
    refuse_reason: str = "player account is suspended"
    malformed_next: int = Field(default=0, ge=0)
    """The next N order reads answer 200 with a body that is not JSON."""
    body_next: str | None = None
    """The next order read answers 200 with exactly this body (an unknown status, a missing field,
    another player's order, a 2 MB answer: what a client must refuse)."""
    only: Part | None = None


class FaultBox:
    """The faults in force, used up under a lock (the server answers on many threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.faults = Faults()

    def set(self, faults: Faults) -> None:
        with self._lock:
            self.faults = faults

    def take(self, part: Part, name: str) -> bool:
        """True when the counted fault `name` hits this request of `part` (and use one up)."""
        with self._lock:
            f = self.faults
            if f.only not in (None, part) or getattr(f, name) <= 0:
                return False
            setattr(f, name, getattr(f, name) - 1)
            return True

    def take_body(self, part: Part) -> str | None:
        """`body_next`, used up by the order read it hits."""
        with self._lock:
            f = self.faults
            if f.only not in (None, part) or f.body_next is None:
                return None
            body, f.body_next = f.body_next, None
            return body

    def random_error(self, part: Part) -> bool:
        f = self.faults
        return f.only in (None, part) and f.error_rate > 0 and random.random() < f.error_rate

    def latency_s(self, part: Part) -> float:
        f = self.faults
        return f.latency_ms / 1000 if f.only in (None, part) else 0.0
