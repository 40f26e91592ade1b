"""The `Store`: one async SQLAlchemy engine, the schema check, sessions and the audit writer.

SQLite (WAL) by default, any SQLAlchemy async URL through `ARCA_DB_URL`. A database with an
unknown or newer schema is refused with a clear message and never modified.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import MetaData, Select, String, Table, event, inspect, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import StaticPool

from bot.redaction import redact_url
from bot.store.direct import DirectSQLite, RowCodec, with_column_defaults
from bot.store.direct_pg import DirectPostgres
from bot.store.models import SCHEMA_VERSION, UPGRADABLE_FROM, AuditEntry, Base, SchemaMeta, utcnow

T = TypeVar("T")


class StoreError(Exception):
    """The database cannot be used (unreachable, foreign or newer schema); one line for the operator."""


def _redact_url(url: str) -> str:
    return redact_url(url)


def describe_error(exc: BaseException) -> str:
    """The driver's own one-line reason (SQLAlchemy adds the SQL, parameters and a link on more lines)."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _schema_problem(url: str, tables: set[str], version_text: str | None) -> str | None:
    """Why a database with these tables and schema version is not ours to use; None when it is."""
    shown = _redact_url(url)
    if "schema_meta" not in tables:
        if tables:
            return (
                f"database {shown} holds tables that are not Arca Support Bot's "
                f"({', '.join(sorted(tables)[:5])}); refusing to touch it. Point ARCA_DB_URL or "
                "ARCA_DATA_DIR at an empty or Arca database."
            )
        return None
    try:
        version = int(version_text) if version_text is not None else None
    except ValueError:
        version = None
    if version is None:
        return f"database {shown} has no readable schema version; refusing it"
    if version > SCHEMA_VERSION:
        return (
            f"database schema version {version} is newer than this bot understands "
            f"({SCHEMA_VERSION}); upgrade the bot, the database was not modified"
        )
    if version < SCHEMA_VERSION and version not in UPGRADABLE_FROM:
        return (
            f"database schema version {version} is older than {SCHEMA_VERSION} and no migration "
            "exists for it; the database was not modified"
        )
    missing = set(Base.metadata.tables) - tables - set(UPGRADABLE_FROM.get(version, ()))
    if missing:
        return f"database schema version {version} is missing tables {sorted(missing)}; it was not modified"
    return None


def inspect_sqlite_file(path: Path, url: str) -> None:
    """Refuse a SQLite file that is not ours, reading it only: no pragma that writes (WAL) runs before.

    Opened read-only through the URI form, so a foreign, newer or garbled file stays byte-identical.
    A missing or empty file is fine (it becomes a new Arca database).
    """
    if not path.is_file() or path.stat().st_size == 0:
        return
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open database {_redact_url(url)}: {exc}") from None
    try:
        tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        version = None
        if "schema_meta" in tables:
            row = con.execute("SELECT value FROM schema_meta WHERE key = 'schema_version'").fetchone()
            version = row[0] if row else None
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc) or "malformed" in str(exc):
            raise StoreError(
                f"{path} is not a SQLite database or is damaged; the file was not modified. Move it away "
                "or point ARCA_DB_URL / ARCA_DATA_DIR elsewhere."
            ) from None
        raise StoreError(f"cannot read database {_redact_url(url)}: {exc}") from None
    finally:
        con.close()
    problem = _schema_problem(url, tables, None if version is None else str(version))
    if problem:
        raise StoreError(problem)


def _schema_for(dialect: str) -> MetaData:
    """The tables to create on `dialect`. PostgreSQL gets its VARCHARs without a length.

    SQLite ignores `String(n)` lengths, PostgreSQL enforces them: an over-long order id that a model
    made up would be ORDER_NOT_FOUND on SQLite but a failed audit insert (tool ERROR) on PostgreSQL.
    Unbounded VARCHAR keeps both backends accepting the same values; every constraint (primary and
    foreign keys, unique idempotency keys, the one-live-coupon partial index) is created as declared.
    """
    if dialect != "postgresql":
        return Base.metadata
    copy = MetaData()
    for table in Base.metadata.sorted_tables:
        table.to_metadata(copy)
    for table in copy.tables.values():
        for column in table.columns:
            if type(column.type) is String and column.type.length is not None:
                column.type = String()
    return copy


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
    """Owns the engine and hands out sessions. Construct, then `await open()`; `await close()` at the end."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = url
        self._echo = echo
        self._engine: AsyncEngine | None = None
        self._sessions: async_sessionmaker[AsyncSession] | None = None
        self.direct: DirectSQLite | None = None
        """File SQLite only: short transactions on the loop thread (hot paths; see `bot.store.direct`)."""
        self._audit_rows: RowCodec | None = None
        self.direct_pg: DirectPostgres | None = None
        """PostgreSQL only: plain asyncpg connections for the ledger's issuance (see `bot.store.direct_pg`)."""

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
        if self.is_sqlite:

            @event.listens_for(engine.sync_engine, "connect")
            def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
                cur = dbapi_conn.cursor()
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA synchronous=NORMAL")
                cur.execute("PRAGMA foreign_keys=ON")
                cur.execute("PRAGMA busy_timeout=30000")
                cur.close()

        return engine

    async def open(self, *, create: bool = True) -> None:
        """Connect, then check the schema: create it in an empty database, refuse a foreign one."""
        if self._engine is not None:
            return
        try:
            if self.is_sqlite:
                database = make_url(self.url).database or ""
                if database not in ("", ":memory:") and not _is_sqlite_uri(database):
                    inspect_sqlite_file(Path(database), self.url)  # read-only, before any pragma writes
            self._engine = self._make_engine()
        except (SQLAlchemyError, ImportError, ValueError, OSError) as exc:
            raise StoreError(f"cannot open database {_redact_url(self.url)}: {describe_error(exc)}") from None
        self._sessions = async_sessionmaker(self._engine, expire_on_commit=False)
        before = _driver_threads()
        try:
            await self._check_schema(create=create)
        except StoreError:
            await self.close()
            await _settle_driver_threads(before)
            raise
        except (SQLAlchemyError, OSError) as exc:
            await self.close()
            await _settle_driver_threads(before)
            raise StoreError(f"cannot open database {_redact_url(self.url)}: {describe_error(exc)}") from None
        self.direct = self._open_direct()
        if self.dialect == "postgresql" and not make_url(self.url).query:
            self.direct_pg = await DirectPostgres.open(self.url)

    def _open_direct(self) -> DirectSQLite | None:
        """After the schema check passed (the file is ours): the loop-thread connection of the hot paths."""
        if not self.is_sqlite:
            return None
        database = make_url(self.url).database or ""
        if database in ("", ":memory:") or _is_sqlite_uri(database):
            return None  # a private in-memory database or a read-only URI: everything goes through the engine
        return DirectSQLite(Path(database), self.engine.dialect)

    async def _check_schema(self, *, create: bool) -> None:
        async with self.engine.begin() as conn:
            tables = set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
            version = None
            if "schema_meta" in tables:
                version = (
                    await conn.execute(select(SchemaMeta.value).where(SchemaMeta.key == "schema_version"))
                ).scalar_one_or_none()
            problem = _schema_problem(self.url, tables, version)
            if problem:
                raise StoreError(problem)
            if tables:
                if int(version) < SCHEMA_VERSION:
                    await self._upgrade(conn, int(version), create=create)
                return
            if not create:
                raise StoreError(f"database {_redact_url(self.url)} is empty; run `arca-bot seed`")
            await conn.run_sync(_schema_for(conn.dialect.name).create_all)
            await conn.execute(
                SchemaMeta.__table__.insert().values(key="schema_version", value=str(SCHEMA_VERSION))
            )

    async def _upgrade(self, conn: Any, version: int, *, create: bool) -> None:
        """Bring an older, known schema up to date: the upgrades only add tables (`UPGRADABLE_FROM`)."""
        if not create:
            raise StoreError(
                f"database schema version {version} is older than {SCHEMA_VERSION}; the bot adds the "
                f"missing tables ({', '.join(UPGRADABLE_FROM[version])}) at its next start; it was not modified"
            )
        schema = _schema_for(conn.dialect.name)
        new_tables = [schema.tables[name] for name in UPGRADABLE_FROM[version]]
        await conn.run_sync(lambda c: schema.create_all(c, tables=new_tables, checkfirst=True))
        await conn.execute(
            SchemaMeta.__table__.update()
            .where(SchemaMeta.key == "schema_version")
            .values(value=str(SCHEMA_VERSION))
        )

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

    async def fetch(self, query: Select[Any], **params: Any) -> list[Any]:
        """The rows of a Core SELECT with named `bindparam`s (keep `query` a module constant: it is
        compiled once). File SQLite: on the loop thread, about 20 µs instead of a session's 150–300;
        elsewhere through the engine. Rows read by column name either way (`row.amount`)."""
        if self.direct is not None:
            compiled = self.direct.compiled(query)
            return await self.direct.read(lambda conn: compiled.rows(conn, params), snapshot=False)
        async with self.engine.connect() as conn:
            return list((await conn.execute(query, params)).all())

    async def insert_rows(self, rows: Sequence[tuple[Table, list[dict[str, Any]]]]) -> None:
        """Insert each table's rows (all with the same columns), all in one transaction; on file SQLite
        as one loop-thread unit (`DirectSQLite.write`), elsewhere as Core executemany statements."""
        rows = [(table, batch) for table, batch in rows if batch]
        if not rows:
            return
        direct = self.direct
        if direct is not None:
            rows = [(table, [with_column_defaults(table, r) for r in batch]) for table, batch in rows]
            codecs = [(direct.codec(table, list(batch[0])), batch) for table, batch in rows]

            def unit(conn: sqlite3.Connection) -> None:
                for codec, batch in codecs:
                    conn.executemany(codec.insert_sql, [codec.params(r) for r in batch])

            await direct.write(unit)
            return
        async with self.engine.begin() as conn:
            for table, batch in rows:
                await conn.execute(table.insert(), batch)

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
        entry = AuditEntry(
            at=utcnow(),
            actor=actor,
            thread_id=thread_id,
            action=action,
            target=target,
            code=code,
            detail=text,
        )
        if session is not None:
            session.add(entry)
            return
        if self.direct is not None:  # one loop-thread insert instead of a session's driver round trips
            codec = self._audit_codec(self.direct)
            row = {c: getattr(entry, c) for c in codec.columns}
            await self.direct.write(lambda conn: conn.execute(codec.insert_sql, codec.params(row)))
            return
        async with self.session() as s:
            s.add(entry)
            await s.commit()

    def _audit_codec(self, direct: DirectSQLite) -> RowCodec:
        codec = self._audit_rows
        if codec is None or codec.dialect is not direct.dialect:
            columns = ["at", "actor", "thread_id", "action", "target", "code", "detail"]
            codec = self._audit_rows = RowCodec(AuditEntry.__table__, direct.dialect, columns)
        return codec

    async def recent_audit(self, limit: int = 20) -> list[AuditEntry]:
        async with self.session() as s:
            rows = await s.execute(select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit))
            return list(rows.scalars())
