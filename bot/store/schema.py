"""Whether a database is Arca Support Bot's to use, and its schema: created in an empty database,
upgraded from a known older version, refused (and never modified) when foreign, newer or damaged. The
SQLite checks open the file read-only before anything (a WAL pragma) could write to it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import MetaData, String, inspect, select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.redaction import redact_url
from bot.store import game_deliveries, incident_tables  # noqa: F401  (register their tables in Base.metadata)
from bot.store.models import SCHEMA_VERSION, UPGRADABLE_FROM, Base, SchemaMeta


class StoreError(Exception):
    """The database cannot be used (unreachable, foreign or newer schema); one line for the operator."""


def describe_error(exc: BaseException) -> str:
    """The driver's own one-line reason (SQLAlchemy adds the SQL, parameters and a link on more lines)."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _schema_problem(url: str, tables: set[str], version_text: str | None) -> str | None:
    """Why a database with these tables and schema version is not ours to use; None when it is."""
    shown = redact_url(url)
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


def _not_upgraded(version: int) -> StoreError:
    """An older, known schema met by an open that may not write (`create=False`: doctor, read-only tools)."""
    return StoreError(
        f"database schema version {version} is older than {SCHEMA_VERSION}; the bot adds the "
        f"missing tables ({', '.join(UPGRADABLE_FROM[version])}) at its next start; it was not modified"
    )


def inspect_sqlite_file(path: Path, url: str, *, create: bool = True) -> None:
    """Refuse a SQLite file that is not ours, reading it only: no pragma that writes (WAL) runs before.

    Opened read-only through the URI form, so a foreign, newer or garbled file stays byte-identical; so
    does an older one that an open without `create` may not upgrade (the WAL pragma would rewrite its
    header). A missing or empty file is fine (it becomes a new Arca database).
    """
    if not path.is_file() or path.stat().st_size == 0:
        return
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open database {redact_url(url)}: {exc}") from None
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
        raise StoreError(f"cannot read database {redact_url(url)}: {exc}") from None
    finally:
        con.close()
    problem = _schema_problem(url, tables, None if version is None else str(version))
    if problem:
        raise StoreError(problem)
    if not create and version is not None and int(version) < SCHEMA_VERSION:
        raise _not_upgraded(int(version))


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


async def check_schema(engine: AsyncEngine, url: str, *, create: bool) -> None:
    """Create the schema in an empty database, upgrade a known older one, refuse a foreign or newer one."""
    async with engine.begin() as conn:
        tables = set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
        version = None
        if "schema_meta" in tables:
            version = (
                await conn.execute(select(SchemaMeta.value).where(SchemaMeta.key == "schema_version"))
            ).scalar_one_or_none()
        problem = _schema_problem(url, tables, version)
        if problem:
            raise StoreError(problem)
        if tables:
            if int(version) < SCHEMA_VERSION:
                await _upgrade(conn, int(version), create=create)
            return
        if not create:
            raise StoreError(f"database {redact_url(url)} is empty; run `arca-bot seed`")
        await conn.run_sync(_schema_for(conn.dialect.name).create_all)
        await conn.execute(
            SchemaMeta.__table__.insert().values(key="schema_version", value=str(SCHEMA_VERSION))
        )


async def _upgrade(conn: Any, version: int, *, create: bool) -> None:
    """Bring an older, known schema up to date: the upgrades only add tables (`UPGRADABLE_FROM`)."""
    if not create:
        raise _not_upgraded(version)
    schema = _schema_for(conn.dialect.name)
    new_tables = [schema.tables[name] for name in UPGRADABLE_FROM[version]]
    await conn.run_sync(lambda c: schema.create_all(c, tables=new_tables, checkfirst=True))
    await conn.execute(
        SchemaMeta.__table__.update()
        .where(SchemaMeta.key == "schema_version")
        .values(value=str(SCHEMA_VERSION))
    )


def sqlite_integrity_problem(database_url: str) -> str | None:
    """`PRAGMA quick_check` on an existing SQLite file, opened read-only; the first problem, or None."""
    try:
        url = make_url(database_url)
    except Exception:
        return None
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    path = Path(url.database)
    if not path.is_file() or path.stat().st_size == 0:
        return None
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = [str(r[0]) for r in con.execute("PRAGMA quick_check(5)")]
        finally:
            con.close()
    except sqlite3.Error as exc:
        return f"{path}: integrity check failed: {exc}"
    if rows != ["ok"]:
        return f"{path}: integrity check failed: {rows[0]}"
    return None
