"""Short SQLite transactions run on the event loop's thread, without a driver-thread round trip.

aiosqlite runs every statement, fetch and commit of a connection on that connection's thread: one
thread hop each (≈0.2 ms on a busy 2-core machine), while a small insert + commit in WAL mode with
`synchronous=NORMAL` costs ≈0.03 ms. The hot paths (thread history, the coupon ledger) therefore run
their whole transaction synchronously here, as one unit that never awaits in between, so no other
coroutine can interleave on the connection (no asyncio lock is needed, and none is taken: a unit
waiting for the file's write lock must not hold up the reads and writes queued behind it).

The loop must never wait on a lock: the connection has `busy_timeout=0`; when another connection
(an aiosqlite one, another process) holds the write lock, the unit is rolled back and retried after
an `asyncio.sleep`, up to the same 30 s the other connections wait. Reads in WAL mode never wait on
the writer. Same file, same pragmas, same durability as the Store's own connections.

Writes are group-committed: the first writes of a loop turn (`INLINE_PER_TURN`) commit at once; the
units handed over after them in the same turn run together in ONE `BEGIN IMMEDIATE … COMMIT` at the
next turn (a unit that raises gets its exception and nothing of it is stored: the group is rolled back
and run again without it). A burst of runs appending their messages then costs one commit and one WAL
write of the shared pages instead of one per message; every caller resumes only after its rows are
committed. Units run in the order they were handed over and see the ones before them (the ledger's
read-check-insert stays serial).

`run_unit` runs a store unit (`bot.store.units`) here, its statements compiled once with SQLAlchemy's
own type conversions, so the reads and writes of a run (an order, a player's contacts, the live
coupons, the thread's messages, an issuance) cost no driver-thread hop, no pooled aiosqlite connection
and no ORM session.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Table
from sqlalchemy.engine import Dialect

from bot.store.units import Fetch, Insert, Lock, RaceLost, Statements, Unit, insert_statement

T = TypeVar("T")

LOCK_WAIT_S = 30.0
"""As long as the Store's own connections wait for the write lock (`busy_timeout`)."""

CHECKPOINT_EVERY = 1000
"""Write units between two WAL checkpoints, which run on a worker thread (SQLite's default: 1000 pages)."""

INLINE_PER_TURN = 4
"""Writes of one loop turn committed at once, in their caller's step, before the others are grouped."""

GROUP_MAX = 64
"""Units in one group commit at most: one loop callback stays short (about 2 ms) however many wait."""


def _locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


class DirectSQLite:
    """One sqlite3 connection to the Store's file, used from the loop thread only."""

    def __init__(self, path: Path, dialect: Dialect) -> None:
        self.dialect = dialect
        self._path = path
        self._conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        # No automatic checkpoint on this connection: copying the WAL back and its fsync would run on the
        # loop thread (a stall of tens of ms); `_after_commit` has a worker thread do it instead.
        for pragma in ("synchronous=NORMAL", "foreign_keys=ON", "busy_timeout=0", "wal_autocheckpoint=0"):
            self._conn.execute(f"PRAGMA {pragma}")
        self._commits = 0
        self._pending: list[tuple[Callable[[sqlite3.Connection], Any], asyncio.Future[Any]]] = []
        self._flush: asyncio.Handle | None = None
        self._turn: asyncio.Handle | None = None
        self._inline = 0
        """Writes committed at once in the current loop turn (`INLINE_PER_TURN` at most)."""
        self._deadline: float | None = None
        """While the file is locked by another connection: when the waiting group gives up."""
        self._delay = 0.0
        self._checkpoint: asyncio.Future[None] | None = None
        self.statements = Statements(dialect)
        """This connection's compiled statements (once per statement object)."""
        self.thread_statements = Statements(dialect)
        """The compiled statements of the units run off the loop (`write_off_loop`), kept apart."""

    @property
    def connection(self) -> sqlite3.Connection:
        return self._conn

    async def write(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """Run `unit(conn)` in a write transaction, committed with the units handed over alongside it
        (see the module's doc); retried while another connection holds the file's write lock."""
        loop = asyncio.get_running_loop()
        if not self._pending and self._flush is None and self._inline < INLINE_PER_TURN:
            # The first writes of a loop turn commit at once, in their caller's step: a lone writer pays
            # no extra turn. The ones after them in the same turn are grouped (`_commit_group`).
            self._inline += 1
            if self._turn is None:
                self._turn = loop.call_soon(self._end_turn)
            try:
                results, failed = self._run_group([unit])
            except sqlite3.OperationalError as exc:
                if self._conn.in_transaction or not _locked(exc):
                    raise
            else:
                self._after_commit(1)
                if failed:
                    raise failed[0]
                return results[0]  # type: ignore[no-any-return]
        future: asyncio.Future[T] = loop.create_future()
        self._pending.append((unit, future))
        if self._flush is None:
            self._flush = loop.call_soon(self._commit_group)
        return await future

    def _end_turn(self) -> None:
        self._turn = None
        self._inline = 0

    def _commit_group(self) -> None:
        self._flush = None
        # A unit whose caller was cancelled meanwhile still runs: a write handed over is committed, as
        # when each write ran at once in its caller's step.
        group = self._pending[:GROUP_MAX]
        del self._pending[:GROUP_MAX]
        if self._pending:  # the rest in the next round, after other callbacks had their turn
            self._flush = asyncio.get_running_loop().call_soon(self._commit_group)
        if not group:
            return
        try:
            results, failed = self._run_group([unit for unit, _future in group])
        except sqlite3.OperationalError as exc:
            if not self._conn.in_transaction and _locked(exc):
                self._wait_for_lock(group, exc)
                return
            self._fail(group, exc)
            return
        except BaseException as exc:  # the commit (disk full, I/O) or the connection failed: nothing stored
            self._fail(group, exc)
            if not isinstance(exc, Exception):
                raise
            return
        self._deadline, self._delay = None, 0.0
        for i, (_unit, future) in enumerate(group):
            if future.done():
                continue
            if i in failed:
                future.set_exception(failed[i])
            else:
                future.set_result(results[i])
        self._after_commit(len(group))

    def _run_group(
        self, units: list[Callable[[sqlite3.Connection], Any]]
    ) -> tuple[dict[int, Any], dict[int, Exception]]:
        """All `units` in one transaction. When one raises, the transaction is rolled back and run again
        without it: units are written to be re-run whole (as on a locked file), and a failure is rare
        (a lost race), so no savepoint per unit — each statement on this thread is a GIL hand-off."""
        failed: dict[int, Exception] = {}
        while True:
            results: dict[int, Any] = {}
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for i, unit in enumerate(units):
                    if i in failed:
                        continue
                    try:
                        results[i] = unit(self._conn)
                    except Exception as exc:
                        failed[i] = exc
                        break
                else:
                    self._conn.execute("COMMIT")
                    return results, failed
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            if self._conn.in_transaction:  # a unit failed: undo the pass, run the others again
                self._conn.execute("ROLLBACK")

    def _fail(self, group: list[Any], exc: BaseException) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")
        for _unit, future in group:
            if not future.done():
                future.set_exception(exc)

    def _wait_for_lock(self, group: list[Any], exc: sqlite3.OperationalError) -> None:
        """Another connection holds the write lock: try the group again later (units handed over in
        the meantime join it), up to `LOCK_WAIT_S`; the loop never waits on the lock."""
        now = time.monotonic()
        if self._deadline is None:
            self._deadline = now + LOCK_WAIT_S
        if not _locked(exc) or now >= self._deadline:
            self._deadline = None
            for _unit, future in group:
                if not future.done():
                    future.set_exception(exc)
            return
        self._pending[:0] = group
        self._delay = min(max(self._delay * 2, 0.0005), 0.02)
        loop = asyncio.get_running_loop()
        if self._flush is not None:
            self._flush.cancel()
        self._flush = loop.call_later(self._delay, self._commit_group)

    async def write_off_loop(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """A long write unit (an incident's grant batch: hundreds of rows) in its own transaction on a
        worker thread, with a connection of its own, so the loop keeps serving live conversations
        meanwhile. It waits there for the file's write lock (`busy_timeout`); the loop's own writers
        retry meanwhile, as with any other connection's writer. Same pragmas, same durability."""
        out = await asyncio.get_running_loop().run_in_executor(None, self._write_in_thread, unit)
        self._after_commit(1)
        return out

    def _write_in_thread(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        conn = sqlite3.connect(str(self._path), isolation_level=None, timeout=LOCK_WAIT_S)
        try:
            for pragma in ("synchronous=NORMAL", "foreign_keys=ON", "wal_autocheckpoint=0"):
                conn.execute(f"PRAGMA {pragma}")
            conn.execute("BEGIN IMMEDIATE")
            try:
                out = unit(conn)
                conn.execute("COMMIT")
                return out
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        finally:
            conn.close()

    async def read(self, unit: Callable[[sqlite3.Connection], T], *, snapshot: bool = True) -> T:
        """Run `unit(conn)` at once, on one consistent snapshot (a deferred read transaction); a unit of
        one statement (`snapshot=False`) is consistent by itself and spares the BEGIN and COMMIT."""
        return await self._read(unit, "BEGIN" if snapshot else None)

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
                try:
                    # BEGIN inside the rollback guard: an exception raised right after it (a signal,
                    # a timeout) must not leave this shared connection inside a transaction.
                    if begin is not None:
                        self._conn.execute(begin)
                    out = unit(self._conn)
                    if self._conn.in_transaction:
                        self._conn.execute("COMMIT")
                    return out
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                if not _locked(exc) or time.monotonic() >= deadline:
                    raise
            await asyncio.sleep(delay)  # (rare in WAL: a read waits only while the WAL is recovered)
            delay = min(delay * 2, 0.02)

    def close(self) -> None:
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if self._turn is not None:
            self._turn.cancel()
            self._turn = None
        for _unit, future in self._pending:
            if not future.done():
                future.set_exception(RuntimeError("the store was closed before this write was committed"))
        self._pending.clear()
        if self._checkpoint is not None and not self._checkpoint.done():
            self._checkpoint.cancel()
        self._conn.close()


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
