"""File SQLite without aiosqlite: reads on the event loop's thread, writes through `sqlite_writer`.

aiosqlite runs every statement, fetch and commit of a connection on that connection's thread: one
thread hop each (≈0.2 ms on a busy 2-core machine), while a small insert + commit in WAL mode with
`synchronous=NORMAL` costs ≈0.03 ms. So the hot paths (thread history, the coupon ledger, a run's
lookups) run their whole unit at once, synchronously, on a plain `sqlite3` connection:

- **Reads** run on the loop thread (one connection, one consistent snapshot per unit, no BEGIN around a
  one-statement read). In WAL mode a read never waits for a writer.
- **Writes** go to `bot.store.backends.sqlite_writer`: a lone write at once on the loop's thread, the
  writes of a busy turn group-committed at the start of the next one, and on a writer thread with a
  connection of its own only what waits for another connection's write lock.
- **Long units** (an incident's grant batch, a thread's history for the fact check) run on worker threads
  with connections of their own (`write_off_loop`, `read_off_loop`).

The writer waits for the file's write lock as long as the Store's own connections do (`busy_timeout`,
`LOCK_WAIT_S`) when another connection (aiosqlite, another process) holds it; the loop never waits on
it. No automatic checkpoint on any connection: copying the WAL back runs on a worker thread every
`CHECKPOINT_EVERY` committed units. Same file, same pragmas, same durability as the Store's own
connections (`sqlite_files`).

`run_unit` drives a store unit (`bot.store.units`) on a connection, its statements compiled once with
SQLAlchemy's own type conversions, so the reads and writes of a run cost no driver-thread hop, no pooled
aiosqlite connection and no ORM session.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Table
from sqlalchemy.engine import Dialect

from bot.loop_share import background_work
from bot.store.backends.sqlite_files import LOCK_WAIT_S, connect, locked, transaction
from bot.store.backends.sqlite_writer import SQLiteWriter
from bot.store.units import (
    Fetch,
    Insert,
    Lock,
    RaceLost,
    Statements,
    Unit,
    insert_statement,
    is_unique_violation,
)

T = TypeVar("T")

CHECKPOINT_EVERY = 1000
"""Write units between two WAL checkpoints, which run on a worker thread (SQLite's default: 1000 pages)."""


class DirectSQLite:
    """The Store's file, read on the loop thread and written through its `SQLiteWriter`."""

    def __init__(self, path: Path, dialect: Dialect) -> None:
        self.dialect = dialect
        self._path = path
        # Reads only: a read never waits in WAL mode, except while a WAL is recovered (`_read` retries).
        self._conn = connect(path, lock_wait_s=0)
        self._commits = 0
        self._checkpoint: asyncio.Future[None] | None = None
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
        self.writer = SQLiteWriter(path, self._after_commit)
        """Every write unit goes through it (`sqlite_writer`)."""
        self.off_loop_commits = 0
        """Long write units committed on worker threads (`write_off_loop`), for `Store.counts`."""

    def counts(self) -> tuple[int, int]:
        """(statements sent, write transactions committed) on this file's direct connections so far."""
        sent = sum(
            s.executed
            for s in (self.statements, self.write_statements, self.thread_statements, self.reader_statements)
        )
        return sent, self.writer.commits + self.off_loop_commits

    @property
    def connection(self) -> sqlite3.Connection:
        """The loop thread's (read) connection."""
        return self._conn

    async def write(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """Run `unit(conn)` in a write transaction (`SQLiteWriter.write`: a lone write at once, the others
        group-committed in the loop's next turn); resumes once it is committed."""
        if self._closed:
            raise RuntimeError("the store is closed")
        return await self.writer.write(unit)

    async def write_off_loop(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """A long write unit (an incident's grant batch: hundreds of rows) in its own transaction on a
        worker thread, with a connection of its own, so the writer keeps committing live conversations'
        units until this one takes the file's write lock. Same pragmas, same durability."""
        out = await asyncio.get_running_loop().run_in_executor(None, self._write_in_thread, unit)
        self.off_loop_commits += 1
        self._after_commit(1)
        return out

    def _write_in_thread(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        with background_work():
            conn = connect(self._path, lock_wait_s=LOCK_WAIT_S)
            try:
                return transaction(conn, "BEGIN IMMEDIATE", unit)
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
            self._reader_conn = connect(self._path, lock_wait_s=LOCK_WAIT_S)
        with background_work():
            return transaction(self._reader_conn, begin, unit)

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
                return transaction(self._conn, begin, unit)
            except sqlite3.OperationalError as exc:
                if not locked(exc) or time.monotonic() >= deadline:
                    raise
            await asyncio.sleep(delay)  # (rare in WAL: a read waits only while the WAL is recovered)
            delay = min(delay * 2, 0.02)

    def close(self) -> None:
        """Every unit handed over is run and committed first (the writer is joined), then both
        connections close."""
        if self._closed:
            return
        self._closed = True
        self.writer.close()
        if self._reader is not None:
            self._reader.submit(self._close_reader)
            self._reader.shutdown(wait=True)
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
                statements.executed += 1
                prepared = statements(op.query)
                rows = [prepared.decode(r) for r in conn.execute(prepared.sql, prepared.args(op.params))]
                result = (rows[0] if rows else None) if op.one else rows
            elif isinstance(op, Insert):
                statements.executed += 1
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
                    if not is_unique_violation(exc):
                        raise
                    raise RaceLost() from exc
                result = ids if op.ids else None
            elif isinstance(op, Lock):
                result = None  # the unit's transaction holds the file's write lock already
            else:
                raise TypeError(f"not a store statement: {op!r}")
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
