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

`read_orm` runs a read on a synchronous SQLAlchemy `Session` over this same connection, so ORM reads
(an order, a player, the live coupons) cost no driver-thread hop and no pooled aiosqlite connection.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Table, create_engine
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

T = TypeVar("T")

LOCK_WAIT_S = 30.0
"""As long as the Store's own connections wait for the write lock (`busy_timeout`)."""

CHECKPOINT_EVERY = 1000
"""Commits between two WAL checkpoints, which run on a worker thread (SQLite's own default is 1000 pages)."""


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
        self._checkpoint: asyncio.Future[None] | None = None
        self._codecs: dict[tuple[str, tuple[str, ...]], RowCodec] = {}
        # The ORM over this very connection; no reset on return: `_run` owns the transaction.
        self._orm = create_engine(
            "sqlite://", creator=lambda: self._conn, poolclass=StaticPool, pool_reset_on_return=None
        )

    @property
    def connection(self) -> sqlite3.Connection:
        return self._conn

    def codec(self, table: Table, columns: list[str]) -> RowCodec:
        """The INSERT and value conversions of `columns` of `table` on this connection (built once)."""
        key = (table.name, tuple(columns))
        codec = self._codecs.get(key)
        if codec is None:
            codec = self._codecs[key] = RowCodec(table, self.dialect, columns)
        return codec

    async def write(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """Run `unit(conn)` inside `BEGIN IMMEDIATE … COMMIT`; retried whole while the file is locked."""
        return await self._run(unit, "BEGIN IMMEDIATE")

    async def read(self, unit: Callable[[sqlite3.Connection], T]) -> T:
        """Run `unit(conn)` on one consistent snapshot (a deferred read transaction)."""
        return await self._run(unit, "BEGIN")

    async def read_orm(self, unit: Callable[[Session], T]) -> T:
        """Run `unit(session)` on one consistent snapshot, with a synchronous ORM session on this
        connection. Objects it returns are detached with their columns loaded (no lazy loads)."""

        def in_session(_conn: sqlite3.Connection) -> T:
            with Session(self._orm, expire_on_commit=False) as session:
                return unit(session)

        return await self._run(in_session, "BEGIN")

    def _after_commit(self) -> None:
        self._commits += 1
        if self._commits % CHECKPOINT_EVERY or (self._checkpoint is not None and not self._checkpoint.done()):
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

    async def _run(self, unit: Callable[[sqlite3.Connection], T], begin: str) -> T:
        deadline = time.monotonic() + LOCK_WAIT_S
        delay = 0.0005
        while True:
            try:
                try:
                    # BEGIN inside the rollback guard: an exception raised right after it (a signal,
                    # a timeout) must not leave this shared connection inside a transaction.
                    self._conn.execute(begin)
                    out = unit(self._conn)
                    if self._conn.in_transaction:
                        self._conn.execute("COMMIT")
                    if begin != "BEGIN":
                        self._after_commit()
                    return out
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                if not _locked(exc) or time.monotonic() >= deadline:
                    raise
            # Rolled back, the connection is idle: other units run while this one waits its turn.
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.02)

    def close(self) -> None:
        if self._checkpoint is not None and not self._checkpoint.done():
            self._checkpoint.cancel()
        self._orm.dispose()
        self._conn.close()


class RowCodec:
    """A table's INSERT and value conversions exactly as SQLAlchemy writes and reads them on SQLite."""

    def __init__(self, table: Table, dialect: Dialect, columns: list[str]) -> None:
        self.columns = columns
        self.insert_sql = (
            f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        )
        self._bind = [table.c[name].type._cached_bind_processor(dialect) for name in columns]
        self._table = table
        self.dialect = dialect

    def params(self, row: dict[str, Any]) -> tuple[Any, ...]:
        values = []
        for name, process in zip(self.columns, self._bind, strict=True):
            value = row.get(name)
            values.append(process(value) if process is not None else value)
        return tuple(values)

    def reader(self, name: str) -> Callable[[Any], Any]:
        """How a stored value of column `name` is turned back into Python (JSON, booleans, dates)."""
        column = self._table.c[name]
        process = column.type._cached_result_processor(self.dialect, None)
        return process if process is not None else (lambda v: v)
