"""The writes of the store's SQLite file (`DirectSQLite.write`): a lone write committed at once on the
loop's thread, the writes asked for together group-committed at the start of the loop's next turn, and a
writer thread for what must wait for another connection's lock.

Writes are group-committed: a group runs in ONE `BEGIN IMMEDIATE … COMMIT`, in the order its units were
asked for, each seeing the ones before it (the ledger's read-check-insert stays serial: one writer at a
time). A unit that raises gets its exception and nothing of it is stored: the group is rolled back and run
again without it. A burst of runs appending their messages costs one commit and one WAL write of the
shared pages instead of one per message. A unit whose caller was cancelled meanwhile still runs: a write
asked for is committed.

- **A lone write**, with nothing waiting and no background thread at work, is committed on the loop's
  thread at once (`SQLiteWriter._write_inline`): its statements cost what they cost (≈0.1 ms), with no
  thread hop and no wake-up of the loop.
- **Writes of a busy turn** (the turn spent `INLINE_TURN_S` on inline writes already, or a background
  thread is at work) wait for the start of the loop's next turn and are committed there together
  (`_commit_loop_group`, `LOOP_GROUP_MAX` a turn). Until wave 4 they went to the writer thread, which had
  to win the GIL back from the busy loop after every `sqlite3` call: a conversation of the
  200-conversation burst waited 100–320 ms for its writes there.
- **The writer thread** takes the writes the loop cannot commit without waiting: another connection
  (aiosqlite, another process) holds the file's write lock. It waits for the lock as long as the Store's
  own connections do (`LOCK_WAIT_S`), and every write asked for while it has some queues behind them, so
  the order holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from bot.loop_share import background_busy
from bot.store.backends.sqlite_files import LOCK_WAIT_S, connect, locked, transaction

T = TypeVar("T")

INLINE_TURN_S = 0.001
"""Inline writes one loop turn may run before the turn's next writes go to the writer. It was one write
a turn: a task that writes, then writes again without giving the loop a turn (sequential coupon issues,
a run's answer after its last tool) sent every second write through the writer, whose hand-over cost
≈0.2 ms of the loop's time against ≈0.03 ms for the commit itself (cProfile, 1,000 issues: 871 of them
went to the writer)."""

GROUP_MAX = 64
"""Units in one group commit at most, so a failing unit's rerun stays short."""

LOOP_GROUP_MAX = 32
"""Units the loop's thread group-commits in one turn at most (`_commit_loop_group`; the rest go in the
next turn's group): ≈0.1 ms of statements each, so a turn's group stays a few ms however many runs wrote
in the turn before. Not tuned finely: in the 200-conversation burst (2026-12-07, load 10–12, 2 interleaved
rounds each, `bench.burst_ab`) 8 a turn made the conversations wait 435 ms for their writes, 32 170 ms,
128 198 ms, at the same worst lag within the machine's noise."""

_STOP = object()
"""Handed to the writer by `close`: every unit before it is run, then the thread ends."""


class _Pending:
    """A unit handed to the writer: the future its caller awaits, and the caller's context."""

    __slots__ = ("context", "future", "unit")

    def __init__(self, unit: Callable[[sqlite3.Connection], Any], future: asyncio.Future[Any]) -> None:
        self.unit = unit
        self.future = future
        self.context = contextvars.copy_context()


class SQLiteWriter:
    """The writer thread of one SQLite file, and the loop thread's inline writes beside it.
    `on_commit(n)` is called on the caller's loop after `n` units were committed (the WAL checkpoint's
    count)."""

    def __init__(self, path: Path, on_commit: Callable[[int], None]) -> None:
        self._path = path
        self._on_commit = on_commit
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._handed = 0
        """Units handed to the writer (counted on the loop's thread)."""
        self._committed = 0
        """Units the writer is done with (counted on the writer's thread): equal to `_handed` when none is
        waiting or being written."""
        self._writing = threading.Lock()
        """Held by whoever writes: the writer for a group, the loop's thread for an inline write."""
        self._inline_conn: sqlite3.Connection | None = None
        """The loop thread's write connection (`_write_inline`): it never waits for the file's lock."""
        self.commits = 0
        """Transactions committed (a group counts once), for `Store.counts`: the writer thread and the
        inline writes both add to it, never at once (`_writing`)."""
        self._inline_turn_s = 0.0
        """Seconds of inline writes in the loop's current turn: past `INLINE_TURN_S` the turn's other writes
        go to the writer, so that runs arriving together never stretch one turn by a commit each."""
        self._turn_pending = False
        self._group_loop: asyncio.AbstractEventLoop | None = None
        """The loop whose turn commits `_loop_group` (a store used from another loop hands over)."""
        self._loop_group: list[_Pending] = []
        """Writes that wait for the start of the loop's next turn to be committed there together
        (`_commit_loop_group`)."""
        self._thread = threading.Thread(target=self._write_loop, name="arca-sqlite-writer", daemon=True)
        self._thread.start()

    async def write(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """Run `unit(conn)` in a write transaction, committed with the units handed over alongside it
        (see the module's doc); resumes once it is committed. A lone write runs at once on the loop's
        thread instead (`_write_inline`)."""
        done, out = self._write_inline(unit)
        if done:
            return out  # type: ignore[return-value]
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        pending = _Pending(unit, future)
        if self._handed == self._committed and (not self._loop_group or self._group_loop is loop):
            # the writer has nothing of ours, so the order holds on the loop (one loop's group at a time)
            self._loop_group.append(pending)
            if len(self._loop_group) == 1:
                self._group_loop = loop
                loop.call_soon(self._commit_loop_group)
        else:
            self._hand_over([pending])
        return await future

    def _hand_over(self, units: list[_Pending]) -> None:
        """To the writer thread, in order (it waits for another connection's lock; the loop never does)."""
        for pending in units:
            self._handed += 1
            self._queue.put(pending)

    def _commit_loop_group(self) -> None:
        """At the start of the loop's turn after they were asked for: the writes waiting in `_loop_group`
        (`LOOP_GROUP_MAX` of them; the rest in the next turn) committed together on the loop's thread, as
        the writer thread would (`_run_group`), and each caller told its outcome.

        They ran on the writer thread before (wave 4): every `sqlite3` call gives the GIL away, and the
        writer waited for a switch interval to win it back from a busy loop at each one, so in the
        200-conversation burst a conversation waited 100–320 ms for its 1.5 commits (`Store.counts`),
        for ≈0.1 ms of statements per write. On the loop's thread a group costs the loop what its
        statements cost, once per turn, and no conversation waits for another thread's turn."""
        group, self._loop_group = self._loop_group[:LOOP_GROUP_MAX], self._loop_group[LOOP_GROUP_MAX:]
        if not group:  # `close` handed them to the writer meanwhile
            return
        if self._loop_group:
            asyncio.get_running_loop().call_soon(self._commit_loop_group)
        if not self._writing.acquire(blocking=False):  # the writer finishing its last group: it goes on
            self._hand_over([*group, *self._loop_group])
            self._loop_group = []
            return
        try:
            conn = self._inline_connection()
            try:
                outcome = _run_group(conn, group)
            except sqlite3.OperationalError as exc:
                if not locked(exc):
                    raise
                outcome = None  # another connection writes: the writer waits for it, not the loop
            if outcome is not None:
                self.commits += 1
        except BaseException as exc:  # the commit itself failed (disk full, I/O): nothing stored
            outcome = {}, dict.fromkeys(range(len(group)), exc)
        finally:
            self._writing.release()
        if outcome is None:
            self._hand_over([*group, *self._loop_group])
            self._loop_group = []
            return
        self._settle(group, list(range(len(group))), *outcome)

    def _inline_connection(self) -> sqlite3.Connection:
        if self._inline_conn is None:
            self._inline_conn = connect(self._path, lock_wait_s=0)
        return self._inline_conn

    def _write_inline(self, unit: Callable[[sqlite3.Connection], T]) -> tuple[bool, T | None]:
        """(True, its result) when `unit` was committed here, on the loop's thread; (False, None) when it
        must go to the writer.

        A lone write (a conversation's message, a coupon) pays two thread hops and a wake-up of the loop
        on the writer (≈0.3 ms against ≈0.1 ms for the commit itself). It runs here only when nothing can
        make the loop wait: every unit handed over is committed and the writer idle (so the order of
        writes and the one-writer rule hold), the loop's turn has not spent `INLINE_TURN_S` on inline
        writes yet, no
        background thread is at work (`loop_share.background_busy`: the loop would wait for the GIL at
        each statement), no other connection holds
        the write lock (`BEGIN IMMEDIATE` fails at once: the unit goes to the writer, which waits)."""
        if (
            self._inline_turn_s >= INLINE_TURN_S
            or self._loop_group
            or self._handed != self._committed
            or background_busy()
            or not self._writing.acquire(blocking=False)
        ):
            return False, None
        if not self._turn_pending:
            self._turn_pending = True
            asyncio.get_running_loop().call_soon(self._next_turn)
        try:
            conn = self._inline_connection()
            started = time.perf_counter()
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if locked(exc):
                    return False, None  # another connection writes: the writer waits for it, not the loop
                raise
            out = transaction(conn, None, unit)
            self.commits += 1
            self._inline_turn_s += time.perf_counter() - started
            # No pause after a slow inline write any more (wave 3 sent the next 0.5 s of writes to the
            # writer after one over 2 ms): on a machine shared with other processes a write is slow
            # because the thread was preempted, not for want of the GIL, and the pause sent 872 of 1,000
            # sequential coupon issues through the writer (697 → 814 issues/s median without it, 15
            # interleaved rounds; the burst's worst lag no worse). Known background threads stop
            # inline writes (`background_busy`).
        finally:
            self._writing.release()
        self._on_commit(1)
        return True, out

    def _next_turn(self) -> None:
        """Runs at the start of the loop's next turn: that turn may commit writes inline again."""
        self._inline_turn_s = 0.0
        self._turn_pending = False

    def _write_loop(self) -> None:
        """The writer thread: group after group until `close` hands over `_STOP`."""
        conn = connect(self._path, lock_wait_s=LOCK_WAIT_S)
        try:
            stop = False
            while not stop:
                first = self._queue.get()
                if first is _STOP:
                    break
                group = [first]
                while len(group) < GROUP_MAX:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is _STOP:
                        stop = True
                        break
                    group.append(item)
                with self._writing:
                    outcome = self._commit_group(conn, group)
                self._settle_group(group, outcome)  # the writer idle by the time a caller resumes
        finally:
            conn.close()

    def _commit_group(
        self, conn: sqlite3.Connection, group: list[_Pending]
    ) -> tuple[dict[int, Any], dict[int, BaseException]]:
        try:
            outcome = _run_group(conn, group)
            self.commits += 1
            return outcome
        except BaseException as exc:  # locked past LOCK_WAIT_S, the commit (disk full, I/O): nothing stored
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            return {}, dict.fromkeys(range(len(group)), exc)
        finally:
            self._committed += len(group)  # the writer is done with them (only this thread adds to it)

    def _settle_group(
        self, group: list[_Pending], outcome: tuple[dict[int, Any], dict[int, BaseException]]
    ) -> None:
        """Each caller's loop is told its units' outcome."""
        by_loop: dict[asyncio.AbstractEventLoop, list[int]] = {}
        for i, pending in enumerate(group):
            by_loop.setdefault(pending.future.get_loop(), []).append(i)
        for loop, indexes in by_loop.items():
            # A closed loop refuses the callback: nobody awaits those units any more (they are committed).
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._settle, [group[i] for i in indexes], indexes, *outcome)

    def _settle(
        self,
        group: list[_Pending],
        indexes: list[int],
        results: dict[int, Any],
        failed: dict[int, BaseException],
    ) -> None:
        """On the caller's loop: each caller gets its unit's result or exception."""
        committed = 0
        for pending, i in zip(group, indexes, strict=True):
            if i not in failed:
                committed += 1
            if pending.future.done():
                continue
            if i in failed:
                pending.future.set_exception(failed[i])
            else:
                pending.future.set_result(results[i])
        if committed:
            self._on_commit(committed)

    def close(self) -> None:
        """Every unit handed over or waiting for the loop's next turn is run and committed (the thread is
        joined), then the inline connection closes."""
        self._hand_over(self._loop_group)
        self._loop_group = []
        self._queue.put(_STOP)
        self._thread.join()
        if self._inline_conn is not None:
            self._inline_conn.close()


def _run_group(
    conn: sqlite3.Connection, group: list[_Pending]
) -> tuple[dict[int, Any], dict[int, BaseException]]:
    """All units of `group` in one transaction, each in its caller's context. When one raises, the
    transaction is rolled back and run again without it: units are written to be re-run whole, and a
    failure is rare (a lost race), so no savepoint per unit."""
    failed: dict[int, BaseException] = {}
    while True:
        results: dict[int, Any] = {}
        conn.execute("BEGIN IMMEDIATE")
        try:
            for i, pending in enumerate(group):
                if i in failed:
                    continue
                try:
                    results[i] = pending.context.run(pending.unit, conn)
                except Exception as exc:
                    failed[i] = exc
                    break
            else:
                conn.execute("COMMIT")
                return results, failed
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if conn.in_transaction:  # a unit failed: undo the pass, run the others again
            conn.execute("ROLLBACK")
