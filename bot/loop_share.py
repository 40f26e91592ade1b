"""Sharing the event loop's turns between runs (issue 29: the burst's loop lag).

asyncio runs, in one turn of its loop, every callback that was ready when the turn began. When 200
conversations arrive together, or their model replies land together, each does a slice of work
(history, prompt, parsing, a tool call's bookkeeping) between two awaits, and all 200 slices run in the
same turn: nothing else (a stream's next chunk, a Discord heartbeat, a staff page) runs until they are
done. `give_way()` is a point where a run lets the rest of the loop go first once the current turn has
run longer than `TURN_S`: the run continues at the start of the next turn, after what is waiting. It
costs a clock read when the turn is young, and it never reorders work inside one run.

A turn's start is found without hooking the loop: the first `give_way()` of a turn notes the time and
schedules, with `call_soon`, a callback that clears it; that callback runs at the start of the next turn
(before anything that became ready after it), so the next turn's first `give_way()` starts a new count.
"""

from __future__ import annotations

import asyncio
import time
import weakref

TURN_S = 0.004
"""How long one loop turn runs runs' slices before the next `give_way()` defers to the next turn."""


class _Turn:
    __slots__ = ("started",)

    def __init__(self) -> None:
        self.started: float | None = None

    def clear(self) -> None:
        self.started = None


_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Turn] = weakref.WeakKeyDictionary()


async def give_way() -> None:
    """Let the rest of the loop run first if this turn has already run `TURN_S` of work."""
    loop = asyncio.get_running_loop()
    turn = _turns.get(loop)
    if turn is None:
        turn = _turns[loop] = _Turn()
    while True:
        now = time.perf_counter()
        if turn.started is None:
            turn.started = now
            loop.call_soon(turn.clear)
            return
        if now - turn.started < TURN_S:
            return
        await asyncio.sleep(0)  # to the next turn, where the count starts again (and may be spent again)
