"""Sharing the event loop's turns between runs, and its machine with the background threads (issue 29:
the burst's loop lag).

asyncio runs, in one turn of its loop, every callback that was ready when the turn began. When 200
conversations arrive together, or their model replies land together, each does a slice of work
(history, prompt, parsing, a tool call's bookkeeping) between two awaits, and all 200 slices run in the
same turn: nothing else (a stream's next chunk, a Discord heartbeat, a staff page) runs until they are
done. `give_way()` is a point where a run lets the rest of the loop go first once the current turn has
run longer than `TURN_S`: the run continues at the start of the next turn, after what is waiting. It
costs a clock read when the turn is young, and it never reorders work inside one run. A run gives way
before its model call, after each reply, before a read on the loop's thread, when a message comes in,
and through its answer: before the output guard's evidence is built, at each streamed delta, before
each sentence's checks (`bot.guards.output`), before the final check and before its end is announced
(`bot.conversations.run`). Between two such points a slice stays short (the evidence, one sentence's
checks: ~1 ms); before the answer's points were added, the answer phase ran in one slice of 2–8 ms, and
ten runs' answers landing in one turn made the burst's longest turns.

The loop also shares the machine's cores with threads of background work (the policy search's embedders
on `bot.knowledge`'s workers: in the 200-conversation burst they used 1.6 s of CPU against the loop
thread's 0.9 s, on 2 cores, beside the SQLite writer). `background_priority()` lowers such a thread's
scheduling priority, so that when the loop thread becomes runnable the kernel runs it first: a search
takes a little longer, a reply never waits for an embedding's time slice. Such threads are
`BackgroundExecutor`s: niced, and counted while at work (`background_busy()`), so that the loop thread
does short synchronous work (a lone SQLite commit) itself only when no background thread competes with it
for the GIL.

A turn's start is found without hooking the loop: the first `give_way()` of a turn notes the time and
schedules, with `call_soon`, a callback that clears it; that callback runs at the start of the next turn
(before anything that became ready after it), so the next turn's first `give_way()` starts a new count.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

TURN_S = 0.002
"""How long one loop turn runs runs' slices before the next `give_way()` defers to the next turn.

2 ms since wave 4 session 5 (it was 5 ms): the burst's worst lag comes from turns of a few hundred
callbacks (`bench/results/2026-12-07-quiet4/lagturns.py`), about half of it the search lanes' hold on the
interpreter lock, the rest the turn's own length (lanes answering from memory: 22 ms above idle against
45). On a quiet fresh machine, 2 ms against 5 ms interleaved in one process (`bench.burst_ab`, medians):
worst lag 27.8 against 35.9 ms above idle at 190.8 against 196.9 conversations/s (8 rounds), 33.4 against
45.3 at 160.4 against 164.7 (4 rounds); 3 ms in between (32.9, 187.9). The conversations are cheaper
than when 1 ms turns halved the throughput (below): a deferral costs ~10 µs, 15 a conversation at 5 ms.

Every run deferred in a spent turn wakes in the next one only to find it spent again and defer once more,
so short turns cost the loop work of their own (a burst of 200 passed `give_way()` ~87,000 times with
1 ms turns). Measured on the 200-conversation burst (50 ms model, warm search cache), 2 cores shared with
other work, variants interleaved in one process (wave 4): 1 ms turns 36–63 conversations/s, worst lag
70–200 ms above the same run's idle lag; 5 ms turns 60–76 conversations/s, 72–93 ms above idle; without
`give_way()` at all (wave 4, cold cache) 400–800 ms above idle. Wave 3, on a quiet machine: worst lag
27–42 ms with 4 ms turns and the search workers at the loop's priority; 14–31 ms with them niced
(`background_priority`) only; 9–21 ms with 1 ms turns and niced workers."""

BACKGROUND_NICE = 10
"""How much lower a background thread's priority is (Linux `nice`: the loop thread weighs ~10× more).
Kept in wave 4: it halved the burst's worst lag at the same throughput (wave 3: 27–42 ms → 14–31 ms);
on a machine shared with other busy processes the niced search workers get less CPU too, so a search
waits longer there (the conversation, not the loop, pays)."""


SWITCH_INTERVAL_S = 0.001
"""How long a thread that holds the GIL may keep it while another asks (CPython's default: 5 ms). Every
`sqlite3` call gives the GIL away and takes it back, so the SQLite writer thread waited up to a switch
interval per statement while the loop ran: 85–246 ms per conversation of the burst for its writes.
Measured on the 200-conversation burst, interleaved in one process (wave 4, 3 runs each): 42–106
conversations/s and a worst lag 160–308 ms above idle with 5 ms; 61–130 and 66–170 with 1 ms, at the
same CPU per conversation (5.4–5.9 ms against 5.6–6.7)."""


def share_the_gil() -> None:
    """Set the process's switch interval to `SWITCH_INTERVAL_S` (the app does, as it is built)."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def background_priority() -> None:
    """Lower the calling thread's CPU priority by `BACKGROUND_NICE` (a `ThreadPoolExecutor` initializer).

    Only on Linux, where a thread has a priority of its own; elsewhere `setpriority` would lower the whole
    process, so it does nothing. A thread cannot be raised back: use it for dedicated workers only."""
    if not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + BACKGROUND_NICE))
    except OSError as exc:  # a sandbox that forbids it: the thread runs at the loop's priority
        log.debug("could not lower a background thread's priority: %s", exc)


_busy = 0
_busy_lock = threading.Lock()


@contextlib.contextmanager
def background_work() -> Iterator[None]:
    """Marks the calling thread as doing background work while the block runs (`background_busy`)."""
    global _busy
    with _busy_lock:
        _busy += 1
    try:
        yield
    finally:
        with _busy_lock:
            _busy -= 1


def background_busy() -> bool:
    """True while a background thread is at work (a search, an index build, a long store unit): then the
    loop thread should not start anything that gives the GIL away statement by statement, since each time
    it may wait a switch interval (5 ms) to win it back (`bot.store.backends.sqlite_writer`)."""
    return _busy > 0


def _counted(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    with background_work():
        return fn(*args, **kwargs)


async def to_background_thread(fn: Callable[..., T], /, *args: Any) -> T:
    """`asyncio.to_thread` for background work (embedding, an index rebuild): counted while it runs."""
    return await asyncio.to_thread(_counted, fn, *args)


class BackgroundExecutor(ThreadPoolExecutor):
    """Worker threads of background work: they run at `background_priority()`, and each task runs under
    `background_work()`."""

    def __init__(self, max_workers: int, *, thread_name_prefix: str) -> None:
        super().__init__(
            max_workers=max_workers, thread_name_prefix=thread_name_prefix, initializer=background_priority
        )

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        return super().submit(_counted, fn, *args, **kwargs)


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
