"""The circuit breaker in front of the studio's backend: after N failed requests in a row the bot fails
fast for a while instead of making every player wait for timeouts, then lets one probe request through;
its success closes the circuit, its failure opens it again.

The counting and the open / half-open clock are the `circuitbreaker` library's (used as a context
manager, so nothing lands in its process-wide registry). It lets every caller through once the
recovery time is up; the one-probe rule on top is ours, so a recovering backend sees one request, not
every waiting conversation at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from circuitbreaker import STATE_CLOSED, STATE_HALF_OPEN, STATE_OPEN, CircuitBreaker


class CircuitOpen(Exception):
    """The circuit is open (or a probe is already under way): the request was not sent."""


class Breaker:
    """`async with breaker.guard(): …` around one request; exceptions `counts(exc)` says are the
    backend's fault open the circuit after `failures` in a row; any other outcome closes it."""

    def __init__(self, *, failures: int, recovery_s: float, counts: Callable[[BaseException], bool]) -> None:
        self._circuit = CircuitBreaker(
            failure_threshold=failures,
            recovery_timeout=recovery_s,
            expected_exception=lambda _type, exc: counts(exc),
            name="game-backend",
        )
        self._probing = False

    @property
    def state(self) -> str:
        """`closed`, `open` or `half_open`."""
        return str(self._circuit.state)

    @asynccontextmanager
    async def guard(self) -> AsyncIterator[None]:
        state = self._circuit.state
        if state == STATE_OPEN or (state == STATE_HALF_OPEN and self._probing):
            raise CircuitOpen
        probe = state == STATE_HALF_OPEN
        self._probing = self._probing or probe
        try:
            with self._circuit:
                yield
        finally:
            if probe:
                self._probing = False


__all__ = ["STATE_CLOSED", "STATE_HALF_OPEN", "STATE_OPEN", "Breaker", "CircuitOpen"]
