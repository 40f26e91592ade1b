"""Store units on the SQLAlchemy engine: PostgreSQL behind a URL with options, in-memory SQLite, and
every backend where no direct connection runs (`bot.store.backends.sqlite_direct`, `postgres_direct`)."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.store.units import Fetch, Insert, Lock, RaceLost, Unit, insert_statement, is_unique_violation

T = TypeVar("T")


async def begin_immediate(conn: AsyncConnection) -> None:
    """SQLite: take the file's write lock before the first read, so a write unit's checks and inserts
    see one state (the driver would begin a deferred transaction at the first write only)."""
    raw = await conn.get_raw_connection()
    if not raw.driver_connection.in_transaction:
        await conn.exec_driver_sql("BEGIN IMMEDIATE")


async def run_unit(engine: AsyncEngine, unit: Unit[T], *, write: bool) -> T:
    """Drive `unit` in one transaction of a pooled connection: committed when it returns, rolled back
    when it raises. PostgreSQL runs READ COMMITTED, so every statement after a `Lock` sees what the
    previous holder of the lock committed."""
    async with engine.begin() as conn:
        if write and conn.dialect.name == "sqlite":
            await begin_immediate(conn)
        return await drive(conn, unit)


async def drive(conn: AsyncConnection, unit: Unit[T]) -> T:
    """`unit`'s statements on `conn`, inside the caller's transaction."""
    result: Any = None
    while True:
        try:
            op = unit.send(result)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        if isinstance(op, Fetch):
            rows = (await conn.execute(op.query, dict(op.params))).all()
            result = (rows[0] if rows else None) if op.one else rows
        elif isinstance(op, Lock):
            await conn.execute(op.query, dict(op.params))
            result = None
        elif isinstance(op, Insert):
            statement = insert_statement(op.table, op.columns)
            try:
                if op.ids:
                    result = []
                    for row in op.rows:
                        inserted = await conn.execute(statement, dict(row))
                        result.append(int(inserted.inserted_primary_key[0]))
                else:
                    await conn.execute(statement, [dict(row) for row in op.rows])
                    result = None
            except IntegrityError as exc:
                unit.close()
                if not is_unique_violation(exc):
                    raise
                raise RaceLost() from exc
        else:
            raise TypeError(f"not a store statement: {op!r}")
