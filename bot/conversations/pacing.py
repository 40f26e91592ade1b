"""Spreading bursts of heavy steps over event-loop turns, so one turn never runs hundreds of them.

asyncio runs every callback that is ready in one turn of the loop before it looks at timers and
sockets again. When 200 runs are ready at once (a burst of messages, or model replies that all
arrive together), one turn runs all of them back to back and the loop answers nothing else — a
Discord heartbeat, a running answer's edit, a timer — for as long (tens of ms, measured). A
`TurnBudget` lets `per_turn` callers through in a turn; the others wait one turn more and go first
in the next, in arrival order. The total work is the same; the loop stays responsive in between.
"""

from __future__ import annotations

import asyncio
from collections import deque


class TurnBudget:
    """At most `per_turn` passes through `wait_turn()` in one turn of the running event loop."""

    def __init__(self, per_turn: int) -> None:
        self.per_turn = max(1, per_turn)
        self._used = 0
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._turn: asyncio.Handle | None = None

    async def wait_turn(self) -> None:
        """Return at once while this turn's budget lasts (and nobody waits); otherwise in a later turn."""
        if self._used < self.per_turn and not self._waiting:
            self._used += 1
            self._next_turn()
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        self._next_turn()
        await waiter

    def _next_turn(self) -> None:
        if self._turn is None:
            self._turn = asyncio.get_running_loop().call_soon(self._new_turn)

    def _new_turn(self) -> None:
        """First in a turn: a fresh budget, handed to the longest waiting (they run in the next turn)."""
        self._turn = None
        self._used = 0
        while self._waiting and self._used < self.per_turn:
            waiter = self._waiting.popleft()
            if not waiter.done():  # its run was cancelled meanwhile
                waiter.set_result(None)
                self._used += 1
        if self._used:
            self._next_turn()
