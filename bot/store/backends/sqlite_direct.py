"""File SQLite without aiosqlite: reads on the event loop's thread, writes on one writer thread.

aiosqlite runs every statement, fetch and commit of a connection on that connection's thread: one
thread hop each (≈0.2 ms on a busy 2-core machine), while a small insert + commit in WAL mode with
`synchronous=NORMAL` costs ≈0.03 ms. So the hot paths (thread history, the coupon ledger, a run's
lookups) run their whole unit at once, synchronously, on a plain `sqlite3` connection:

- **Reads** run on the loop thread (one connection, one consistent snapshot per unit, no BEGIN around a
  one-statement read). In WAL mode a read never waits for a writer.
- **Writes** run on one writer thread with a connection of its own. Every `sqlite3` call gives the GIL
  away; a loop thread that ran a group of writes had to win it back once per statement, and while the
  search workers were busy that was one switch interval (5 ms) each: 60–80 ms of a deaf loop for one
  group commit in the 200-conversation burst (`python -m bench.loop_stalls`). On the writer thread that
  wait is the writer's alone; the loop hands a unit over, goes on, and its caller resumes once the
  unit's rows are committed. A lone write, with the writer idle and no background thread at work, is
  committed on the loop's thread at once instead (`DirectSQLite._write_inline`): without competition for
  the GIL its statements cost what they cost, and the run spares the two thread hops.

Writes are group-committed: the writer takes every unit waiting when it is free (`GROUP_MAX` at most)
and runs them in ONE `BEGIN IMMEDIATE … COMMIT`, in the order they were handed over, each seeing the
ones before it (the ledger's read-check-insert stays serial: one writer at a time). A unit that raises
gets its exception and nothing of it is stored: the group is rolled back and run again without it. A
burst of runs appending their messages costs one commit and one WAL write of the shared pages instead
of one per message. A unit whose caller was cancelled meanwhile still runs: a write handed over is
committed.

The writer waits for the file's write lock as long as the Store's own connections do (`busy_timeout`,
`LOCK_WAIT_S`) when another connection (aiosqlite, another process) holds it; the loop never waits on
it. No automatic checkpoint on either connection: copying the WAL back runs on a worker thread every
`CHECKPOINT_EVERY` committed units. Same file, same pragmas, same durability as the Store's own
connections.

`run_unit` drives a store unit (`bot.store.units`) on a connection, its statements compiled once with
SQLAlchemy's own type conversions, so the reads and writes of a run cost no driver-thread hop, no pooled
aiosqlite connection and no ORM session.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Table
from sqlalchemy.engine import Dialect

from bot.loop_share import background_busy, background_work
from bot.store.units import Fetch, Insert, Lock, RaceLost, Statements, Unit, insert_statement

T = TypeVar("T")

LOCK_WAIT_S = 30.0
"""As long as the Store's own connections wait for the write lock (`busy_timeout`)."""

CHECKPOINT_EVERY = 1000
"""Write units between two WAL checkpoints, which run on a worker thread (SQLite's default: 1000 pages)."""

INLINE_SLOW_S = 0.002
"""An inline write (`DirectSQLite._write_inline`) that took longer than this waited for the GIL or the
disk: the writes of the next `INLINE_PAUSE_S` go to the writer thread."""
INLINE_PAUSE_S = 0.5

GROUP_MAX = 64
"""Units in one group commit at most, so a failing unit's rerun stays short."""

PRAGMAS = ("synchronous=NORMAL", "foreign_keys=ON", "wal_autocheckpoint=0")

_STOP = object()
"""Handed to the writer by `close`: every unit before it is run, then the thread ends."""


def _locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


def _connect(path: Path, *, lock_wait_s: float) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=lock_wait_s)
    for pragma in PRAGMAS:
        conn.execute(f"PRAGMA {pragma}")
    return conn


class _Pending:
    """A unit handed to the writer: the future its caller awaits, and the caller's context."""

    __slots__ = ("context", "future", "unit")

    def __init__(self, unit: Callable[[sqlite3.Connection], Any], future: asyncio.Future[Any]) -> None:
        self.unit = unit
        self.future = future
        self.context = contextvars.copy_context()


class DirectSQLite:
    """The Store's file, read on the loop thread and written on one writer thread."""

    def __init__(self, path: Path, dialect: Dialect) -> None:
        self.dialect = dialect
        self._path = path
        # Reads only: a read never waits in WAL mode, except while a WAL is recovered (`_read` retries).
        self._conn = _connect(path, lock_wait_s=0)
        self._commits = 0
        self._checkpoint: asyncio.Future[None] | None = None
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        self._reader: concurrent.futures.ThreadPoolExecutor | None = None
        self._reader_conn: sqlite3.Connection | None = None
        self.statements = Statements(dialect)
        """The loop thread's compiled statements (once per statement object)."""
        self.write_statements = Statements(dialect)
        """The writer thread's compiled statements, kept apart from the loop thread's."""
        self.thread_statements = Statements(dialect)
        """The compiled statements of the units run on worker threads (`write_off_loop`)."""
        self.reader_statements = Statements(dialect)
        """The reader thread's compiled statements (`read_off_loop`)."""
        self._handed = 0
        """Units handed to the writer (counted on the loop's thread)."""
        self._committed = 0
        """Units the writer is done with (counted on the writer's thread): equal to `_handed` when none is
        waiting or being written."""
        self._writing = threading.Lock()
        """Held by whoever writes: the writer for a group, the loop's thread for an inline write."""
        self._inline_conn: sqlite3.Connection | None = None
        """The loop thread's write connection (`_write_inline`): it never waits for the file's lock."""
        self._inline_paused_until = 0.0
        self._inline_turn = False
        """True once a write was committed inline in the loop's current turn: the turn's other writes go
        to the writer, so that runs arriving together never stretch one turn by a commit each."""
        self._writer = threading.Thread(target=self._write_loop, name="arca-sqlite-writer", daemon=True)
        self._writer.start()

    @property
    def connection(self) -> sqlite3.Connection:
        """The loop thread's (read) connection."""
        return self._conn

    async def write(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """Run `unit(conn)` in a write transaction, committed with the units handed over alongside it
        (see the module's doc); resumes once it is committed. A lone write runs at once on the loop's
        thread instead (`_write_inline`)."""
        if self._closed:
            raise RuntimeError("the store is closed")
        done, out = self._write_inline(unit)
        if done:
            return out  # type: ignore[return-value]
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._handed += 1
        self._queue.put(_Pending(unit, future))
        return await future

    def _write_inline(self, unit: Callable[[sqlite3.Connection], T]) -> tuple[bool, T | None]:
        """(True, its result) when `unit` was committed here, on the loop's thread; (False, None) when it
        must go to the writer.

        A lone write (a conversation's message, a coupon) pays two thread hops and a wake-up of the loop
        on the writer (≈0.3 ms against ≈0.1 ms for the commit itself). It runs here only when nothing can
        make the loop wait: every unit handed over is committed and the writer idle (so the order of
        writes and the one-writer rule hold), it is the loop turn's first write (`_inline_turn`), no
        background thread is at work (`loop_share.
        background_busy`: the loop would wait for the GIL at each statement), no other connection holds
        the write lock (`BEGIN IMMEDIATE` fails at once: the unit goes to the writer, which waits), and
        the last inline write was not slow (`INLINE_SLOW_S`: some other thread wanted the GIL; the next
        `INLINE_PAUSE_S` of writes go to the writer)."""
        if (
            self._inline_turn
            or self._handed != self._committed
            or background_busy()
            or time.monotonic() < self._inline_paused_until
            or not self._writing.acquire(blocking=False)
        ):
            return False, None
        self._inline_turn = True
        asyncio.get_running_loop().call_soon(self._next_turn)
        try:
            conn = self._inline_conn
            if conn is None:
                conn = self._inline_conn = _connect(self._path, lock_wait_s=0)
            started = time.perf_counter()
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if _locked(exc):
                    return False, None  # another connection writes: the writer waits for it, not the loop
                raise
            out = _transaction(conn, None, unit)
            if time.perf_counter() - started > INLINE_SLOW_S:
                self._inline_paused_until = time.monotonic() + INLINE_PAUSE_S
        finally:
            self._writing.release()
        self._after_commit(1)
        return True, out

    def _next_turn(self) -> None:
        """Runs at the start of the loop's next turn: that turn may commit one write inline again."""
        self._inline_turn = False

    def _write_loop(self) -> None:
        """The writer thread: group after group until `close` hands over `_STOP`."""
        conn = _connect(self._path, lock_wait_s=LOCK_WAIT_S)
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
            return _run_group(conn, group)
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
            self._after_commit(committed)

    async def write_off_loop(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """A long write unit (an incident's grant batch: hundreds of rows) in its own transaction on a
        worker thread, with a connection of its own, so the writer keeps committing live conversations'
        units until this one takes the file's write lock. Same pragmas, same durability."""
        out = await asyncio.get_running_loop().run_in_executor(None, self._write_in_thread, unit)
        self._after_commit(1)
        return out

    def _write_in_thread(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        with background_work():
            conn = _connect(self._path, lock_wait_s=LOCK_WAIT_S)
            try:
                return _transaction(conn, "BEGIN IMMEDIATE", unit)
            finally:
                conn.close()

    async def read(self, unit: Callable[[sqlite3.Connection], T], *, snapshot: bool = True) -> T:
        """Run `unit(conn)` at once, on one consistent snapshot (a deferred read transaction); a unit of
        one statement (`snapshot=False`) is consistent by itself and spares the BEGIN and COMMIT."""
        return await self._read(unit, "BEGIN" if snapshot else None)

    async def read_off_loop(self, unit: Callable[[sqlite3.Connection], T], *, snapshot: bool = True) -> T:
        """A long read (hundreds of rows decoded: a thread's history for the fact check) on one reader
        thread with a connection of its own, so its statements and row decoding never hold the loop: on
        the loop thread each row fetched gives the GIL away and waits to win it back (measured: such a
        read on the loop made the burst's worst lag 130–160 ms against 50–80 ms off it)."""
        if self._closed:
            raise RuntimeError("the store is closed")
        if self._reader is None:
            self._reader = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="arca-sqlite-reader")
        begin = "BEGIN" if snapshot else None
        return await asyncio.get_running_loop().run_in_executor(
            self._reader, self._read_in_thread, unit, begin
        )

    def _read_in_thread(self, unit: Callable[[sqlite3.Connection], T], begin: str | None) -> T:
        if self._reader_conn is None:  # only ever touched on the one reader thread
            self._reader_conn = _connect(self._path, lock_wait_s=LOCK_WAIT_S)
        with background_work():
            return _transaction(self._reader_conn, begin, unit)

    def _close_reader(self) -> None:
        if self._reader_conn is not None:
            self._reader_conn.close()
            self._reader_conn = None

    def _after_commit(self, units: int) -> None:
        before, self._commits = self._commits, self._commits + units
        if before // CHECKPOINT_EVERY == self._commits // CHECKPOINT_EVERY or (
            self._checkpoint is not None and not self._checkpoint.done()
        ):
            return
        self._checkpoint = asyncio.get_running_loop().run_in_executor(None, self._checkpoint_now)

    def _checkpoint_now(self) -> None:
        """A PASSIVE checkpoint on a connection of its own (never waits for readers or writers)."""
        try:
            con = sqlite3.connect(str(self._path), timeout=0)
            try:
                con.execute("PRAGMA wal_checkpoint(PASSIVE)")
            finally:
                con.close()
        except sqlite3.Error:
            pass  # the next one, or any other connection's automatic checkpoint, catches up

    async def _read(self, unit: Callable[[sqlite3.Connection], T], begin: str | None) -> T:
        deadline = time.monotonic() + LOCK_WAIT_S
        delay = 0.0005
        while True:
            try:
                return _transaction(self._conn, begin, unit)
            except sqlite3.OperationalError as exc:
                if not _locked(exc) or time.monotonic() >= deadline:
                    raise
            await asyncio.sleep(delay)  # (rare in WAL: a read waits only while the WAL is recovered)
            delay = min(delay * 2, 0.02)

    def close(self) -> None:
        """Every unit handed over is run and committed first (the writer is joined), then both
        connections close."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._writer.join()
        if self._reader is not None:
            self._reader.submit(self._close_reader)
            self._reader.shutdown(wait=True)
        if self._checkpoint is not None and not self._checkpoint.done():
            self._checkpoint.cancel()
        if self._inline_conn is not None:
            self._inline_conn.close()
        self._conn.close()


def _transaction(conn: sqlite3.Connection, begin: str | None, unit: Callable[[sqlite3.Connection], T]) -> T:
    """`unit(conn)` between `begin` (None: no BEGIN, one statement is consistent by itself) and COMMIT,
    rolled back when anything raises. BEGIN is inside the rollback guard: an exception raised right after
    it (a signal, a timeout) must not leave a shared connection inside a transaction."""
    try:
        if begin is not None:
            conn.execute(begin)
        out = unit(conn)
        if conn.in_transaction:
            conn.execute("COMMIT")
        return out
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


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


def with_column_defaults(table: Table, row: dict[str, Any]) -> dict[str, Any]:
    """`row` with the Python-side column defaults a Core insert would add (`default="ko"`, `utcnow`)."""
    out = dict(row)
    for column in table.columns:
        default = column.default
        if column.name in out or default is None or not (default.is_scalar or default.is_callable):
            continue
        out[column.name] = default.arg if default.is_scalar else default.arg(None)
    return out


def run_unit(conn: sqlite3.Connection, statements: Statements, unit: Unit[T]) -> T:
    """Drive `unit` on `conn`, synchronously, inside the caller's transaction (`DirectSQLite.write`
    holds the write lock from `BEGIN IMMEDIATE`, `DirectSQLite.read` a snapshot)."""
    result: Any = None
    try:
        while True:
            op = unit.send(result)
            if isinstance(op, Fetch):
                prepared = statements(op.query)
                rows = [prepared.decode(r) for r in conn.execute(prepared.sql, prepared.args(op.params))]
                result = (rows[0] if rows else None) if op.one else rows
            elif isinstance(op, Insert):
                prepared = statements(insert_statement(op.table, op.columns))
                ids = []
                try:
                    if op.ids:
                        for row in op.rows:
                            ids.append(conn.execute(prepared.sql, prepared.args(row)).lastrowid)
                    else:  # one C loop for many rows (a grant batch's hundreds of coupons)
                        conn.executemany(prepared.sql, [prepared.args(row) for row in op.rows])
                except sqlite3.IntegrityError as exc:
                    unit.close()
                    raise RaceLost() from exc
                result = ids if op.ids else None
            elif isinstance(op, Lock):
                result = None  # the unit's transaction holds the file's write lock already
            else:
                raise TypeError(f"not a store statement: {op!r}")
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
