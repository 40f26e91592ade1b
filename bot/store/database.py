"""The `Store`: one async SQLAlchemy engine, the schema check, sessions and the audit writer.

SQLite (WAL) by default, any SQLAlchemy async URL through `ARCA_DB_URL`. A database with an
unknown or newer schema is refused with a clear message and never modified.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Select, event, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import StaticPool

from bot.loop_share import give_way
from bot.redaction import redact_url
from bot.store.backends import engine as engine_path
from bot.store.backends import sqlite_direct
from bot.store.backends.postgres_direct import DirectPostgres
from bot.store.backends.sqlite_direct import DirectSQLite, with_column_defaults
from bot.store.counts import StoreCounts
from bot.store.coupons import CouponLedger
from bot.store.game_deliveries import GameDeliveries
from bot.store.incidents import Incidents
from bot.store.models import AuditEntry, utcnow
from bot.store.orders import Orders
from bot.store.players import Players
from bot.store.schema import StoreError, check_schema, describe_error, inspect_sqlite_file
from bot.store.threads import Threads
from bot.store.units import Fetch, Insert, TableRows, UnitFactory

T = TypeVar("T")

StoreSession = AsyncSession
"""A session `Store.session()` or a ledger's locked session hands out, for store functions that run in
the caller's transaction."""

AUDIT_COLUMNS = ("at", "actor", "thread_id", "action", "target", "code", "detail")


def _is_sqlite_uri(database: str) -> bool:
    """`file:/path?mode=ro` (SQLite URI filenames): not a path to create folders for."""
    return database.startswith("file:")


def _driver_threads() -> set[threading.Thread]:
    # Python names a thread after its target: aiosqlite runs each connection on one such thread.
    return {t for t in threading.enumerate() if "_connection_worker_thread" in t.name}


async def _settle_driver_threads(before: set[threading.Thread]) -> None:
    """Let the worker threads of connections that failed to open finish while the loop still runs.

    aiosqlite stops such a connection by queueing a close on its thread without awaiting it; when
    `asyncio.run` closes the loop first, the thread dies with "RuntimeError: Event loop is closed"
    printed after our own clear error line.
    """
    fresh = _driver_threads() - before
    if fresh:
        await asyncio.to_thread(lambda: [t.join(timeout=2.0) for t in fresh])


class Store:
    """The one door to the database. Construct, then `await open()`; `await close()` at the end.

    Callers ask for what they need through typed methods: `coupons` (the issuance unit and its facts,
    the active coupons a claim names), `orders` (an order with its live coupon),
    `threads` (a thread's history, pauses, resets), `players` (who is behind a Discord id, their
    contacts), `audit`, and ORM `session`s for the staff pages' queries. Which backend and which fast
    path runs a request is decided here alone (`run`).
    """

    def __init__(
        self, url: str, *, echo: bool = False, fast_paths: bool = True, game_delivery: bool = False
    ) -> None:
        self.url = url
        self._echo = echo
        self._fast_paths = fast_paths
        """False: every unit runs on the SQLAlchemy engine (the contract tests compare both paths)."""
        self._engine: AsyncEngine | None = None
        self._sessions: async_sessionmaker[AsyncSession] | None = None
        self.direct: DirectSQLite | None = None
        """File SQLite only: reads and writes on the loop thread, group-committed (see
        `bot.store.backends.sqlite_direct`)."""
        self.direct_pg: DirectPostgres | None = None
        """PostgreSQL only: plain asyncpg connections (see `bot.store.backends.postgres_direct`)."""
        self._engine_statements = 0
        self._engine_commits = 0
        self._writes = 0
        self._write_wait_s = 0.0
        self.game_deliveries = GameDeliveries(self, enabled=game_delivery)
        """The outbox of grants into the game; `game_delivery` (`ARCA_COUPON_DELIVERY=game`): each coupon
        issued writes its job in its own transaction."""
        self.coupons = CouponLedger(self, self.game_deliveries)
        self.threads = Threads(self)
        self.players = Players(self)
        self.incidents = Incidents(self, self.game_deliveries)
        self.orders = Orders(self)

    @property
    def is_sqlite(self) -> bool:
        return self.url.startswith("sqlite")

    @property
    def engine(self) -> AsyncEngine:
        if self._engine is None:
            raise RuntimeError("Store.open() was not awaited")
        return self._engine

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def _make_engine(self) -> AsyncEngine:
        kwargs: dict[str, Any] = {"echo": self._echo}
        if self.is_sqlite:
            url = make_url(self.url)
            database = url.database or ""
            if database in ("", ":memory:"):
                kwargs["poolclass"] = StaticPool
            elif not _is_sqlite_uri(database):
                Path(database).parent.mkdir(parents=True, exist_ok=True)
            kwargs["connect_args"] = {"timeout": 30}
        else:
            kwargs["pool_pre_ping"] = True
            # Bursts of concurrent tool calls (100 issuances on one order in the
            # tests) wait for a pooled connection instead of failing; 30 s is the pool's own default.
            kwargs["pool_size"] = 10
            kwargs["max_overflow"] = 20
            kwargs["pool_timeout"] = 60
        engine = create_async_engine(self.url, **kwargs)
        self._count_on(engine)
        if self.is_sqlite:

            @event.listens_for(engine.sync_engine, "connect")
            def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
                cur = dbapi_conn.cursor()
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA synchronous=NORMAL")  # why: `sqlite_files.PRAGMAS`
                cur.execute("PRAGMA foreign_keys=ON")
                cur.execute("PRAGMA busy_timeout=30000")
                cur.close()

        return engine

    def _count_on(self, engine: AsyncEngine) -> None:
        """The engine's statements and commits, for `counts` (two integer additions each)."""

        @event.listens_for(engine.sync_engine, "before_cursor_execute")
        def _statement(*_args: Any) -> None:
            self._engine_statements += 1

        @event.listens_for(engine.sync_engine, "commit")
        def _commit(*_args: Any) -> None:
            self._engine_commits += 1

    def counts(self) -> StoreCounts:
        """What this store sent to the database since it opened (`bot.store.counts`)."""
        statements, commits = self._engine_statements, self._engine_commits
        if self.direct is not None:
            sent, committed = self.direct.counts()
            statements, commits = statements + sent, commits + committed
        if self.direct_pg is not None:
            statements += self.direct_pg.statements.executed
            commits += self.direct_pg.commits
        return StoreCounts(statements, commits, self._writes, self._write_wait_s)

    async def open(self, *, create: bool = True) -> None:
        """Connect, then check the schema: create it in an empty database, refuse a foreign one."""
        if self._engine is not None:
            return
        try:
            if self.is_sqlite:
                database = make_url(self.url).database or ""
                if database not in ("", ":memory:") and not _is_sqlite_uri(database):
                    inspect_sqlite_file(
                        Path(database), self.url, create=create
                    )  # read-only, before pragmas write
            self._engine = self._make_engine()
        except (SQLAlchemyError, ImportError, ValueError, OSError) as exc:
            raise StoreError(f"cannot open database {redact_url(self.url)}: {describe_error(exc)}") from None
        self._sessions = async_sessionmaker(self._engine, expire_on_commit=False)
        before = _driver_threads()
        try:
            await check_schema(self.engine, self.url, create=create)
        except StoreError:
            await self.close()
            await _settle_driver_threads(before)
            raise
        except (SQLAlchemyError, OSError) as exc:
            await self.close()
            await _settle_driver_threads(before)
            raise StoreError(f"cannot open database {redact_url(self.url)}: {describe_error(exc)}") from None
        if not self._fast_paths:
            return
        self.direct = self._open_direct()
        if self.dialect == "postgresql" and not make_url(self.url).query:
            self.direct_pg = await DirectPostgres.open(self.url, self.engine.dialect)

    def _open_direct(self) -> DirectSQLite | None:
        """After the schema check passed (the file is ours): the plain connections of the hot paths."""
        if not self.is_sqlite:
            return None
        database = make_url(self.url).database or ""
        if database in ("", ":memory:") or _is_sqlite_uri(database):
            return None  # a private in-memory database or a read-only URI: everything goes through the engine
        return DirectSQLite(Path(database), self.engine.dialect)

    async def close(self) -> None:
        if self.direct_pg is not None:
            await self.direct_pg.close()
            self.direct_pg = None
        if self.direct is not None:
            self.direct.close()
            self.direct = None
        if self._engine is not None:
            await self._engine.dispose()
        self._engine = None
        self._sessions = None

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session for reads or a unit of work; the caller commits (or uses `session.begin()`)."""
        if self._sessions is None:
            raise RuntimeError("Store.open() was not awaited")
        async with self._sessions() as session:
            yield session

    async def run(
        self,
        unit: UnitFactory[T],
        *,
        write: bool,
        snapshot: bool = True,
        plain: bool = True,
        off_loop: bool = False,
    ) -> T:
        """Run a store unit (`bot.store.units`) whole, in one transaction, on the fastest path there is:
        file SQLite read on the loop thread (without a BEGIN when `snapshot` is False: one statement
        is consistent by itself) and written there too, group-committed (`sqlite_writer`); PostgreSQL on a plain
        asyncpg connection (without a BEGIN for a read when `snapshot` is False: one round trip), unless
        `plain` is False; else the SQLAlchemy engine. (Every unit runs plain since the asyncpg pool
        decodes JSON as the engine does and returns inserted ids: `postgres_direct`.) A long write (`off_loop`, an incident's
        grant batch) runs on file SQLite in a worker thread instead, a long read (`off_loop` without
        `write`: a thread's history) on the reader thread; on plain asyncpg a long write's Python work
        (decisions, row decoding and binding) runs on a worker thread between the driver's round trips.
        For the store's own modules."""
        if not write:
            return await self._run(unit, write=False, snapshot=snapshot, plain=plain, off_loop=off_loop)
        started = time.perf_counter()
        try:
            return await self._run(unit, write=True, snapshot=snapshot, plain=plain, off_loop=off_loop)
        finally:
            self._writes += 1
            self._write_wait_s += time.perf_counter() - started

    async def _run(
        self, unit: UnitFactory[T], *, write: bool, snapshot: bool, plain: bool, off_loop: bool
    ) -> T:
        direct = self.direct
        if direct is not None and write and off_loop:
            thread_statements = direct.thread_statements

            def long_body(conn: sqlite3.Connection) -> T:
                return sqlite_direct.run_unit(conn, thread_statements, unit())

            return await direct.write_off_loop(long_body)
        if direct is not None and off_loop:
            reader_statements = direct.reader_statements

            def long_read(conn: sqlite3.Connection) -> T:
                return sqlite_direct.run_unit(conn, reader_statements, unit())

            return await direct.read_off_loop(long_read, snapshot=snapshot)
        if direct is not None:
            if not write:
                await give_way()  # a read runs on the loop's thread: not in a turn already spent
            statements = direct.write_statements if write else direct.statements

            def body(conn: sqlite3.Connection) -> T:
                return sqlite_direct.run_unit(conn, statements, unit())

            return await (direct.write(body) if write else direct.read(body, snapshot=snapshot))
        if plain and self.direct_pg is not None:
            return await self.direct_pg.run_unit(
                unit(), off_loop=write and off_loop, snapshot=snapshot or write
            )
        return await engine_path.run_unit(self.engine, unit(), write=write)

    async def ping(self) -> None:
        """One round trip to the database (the web server's `/readyz`); raises when it does not answer."""
        async with self.session() as session:
            await session.execute(select(1))

    async def fetch(self, query: Select[Any], **params: Any) -> list[Any]:
        """The rows of a Core SELECT with named `bindparam`s, each given a default (`bindparam("x", None)`:
        a literal IN list is compiled in, which needs every parameter to have one). Keep `query` a module
        constant: it is compiled once. File SQLite: on the loop thread, about 20 µs instead of a session's 150–300;
        elsewhere through the engine. Rows read by column name either way (`row.amount`)."""

        def unit() -> Any:
            return (yield Fetch(query, params))

        return await self.run(unit, write=False, snapshot=False)

    async def insert_rows(self, rows: Sequence[TableRows]) -> None:
        """Insert each table's rows (all with the same columns), all in one transaction."""
        batches = [(table, [with_column_defaults(table, r) for r in batch]) for table, batch in rows if batch]
        if not batches:
            return

        def unit() -> Any:
            for table, batch in batches:
                yield Insert(table, tuple(batch[0]), batch)

        await self.run(unit, write=True)

    async def audit(
        self,
        *,
        actor: str,
        action: str,
        thread_id: str | None = None,
        target: str | None = None,
        code: str | None = None,
        detail: str | dict[str, Any] | None = None,
        session: AsyncSession | None = None,
    ) -> None:
        """Append one audit row; inside `session` when given (same transaction), else on its own."""
        text = json.dumps(detail, ensure_ascii=False, default=str) if isinstance(detail, dict) else detail
        row = {
            "at": utcnow(),
            "actor": actor,
            "thread_id": thread_id,
            "action": action,
            "target": target,
            "code": code,
            "detail": text,
        }
        if session is not None:
            session.add(AuditEntry(**row))
            return

        def unit() -> Any:
            yield Insert(AuditEntry.__table__, AUDIT_COLUMNS, [row])

        await self.run(unit, write=True)

    async def recent_audit(self, limit: int = 20) -> list[AuditEntry]:
        async with self.session() as s:
            rows = await s.execute(select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit))
            return list(rows.scalars())
