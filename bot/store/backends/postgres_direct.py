"""Short PostgreSQL transactions on plain asyncpg connections, for the coupon ledger's hot path.

Through the SQLAlchemy engine one issuance costs eight round trips: the pool's pre-ping alone is
three (BEGIN, `;`, ROLLBACK, for pgbouncer), then BEGIN, the lock, the facts, the insert and COMMIT.
Here a small asyncpg pool of its own hands out connections without a ping and without a reset query
(nothing on this path changes session state; an unfinished transaction is still rolled back on
release), so an issuance is BEGIN, lock, facts, insert, COMMIT. A store unit (`bot.store.units`) runs
here with its statements compiled once for the asyncpg dialect (`$n` parameters, SQLAlchemy's own
value conversions); units that read or write JSON columns go through the engine instead. A connection that died is dropped by
the pool, and the statement that found it fails like any database error (the tool answers ERROR;
nothing was written).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from sqlalchemy.engine import Dialect, make_url

from bot.store.units import Fetch, Insert, Lock, RaceLost, Statements, Unit, insert_statement

T = TypeVar("T")

POOL_SIZE = 10
"""At most this many connections (the engine's own pool_size); opened on demand, closed after idling."""

IDLE_CLOSE_S = 300.0
MAX_ARGS = 30_000
"""Values one statement binds at most (the protocol's limit is 32,767)."""
CLOSE_WAIT_S = 10.0


def _combine(inserts: list[str]) -> str:
    """INSERTs with `$n` parameters of their own as one statement: `WITH w0 AS (INSERT …) INSERT …`,
    the parameters numbered on from one INSERT to the next."""
    parts: list[str] = []
    offset = 0
    for sql in inserts:
        numbers = [int(n) for n in re.findall(r"\$(\d+)", sql)]
        parts.append(re.sub(r"\$(\d+)", lambda m, o=offset: f"${int(m.group(1)) + o}", sql))
        offset += max(numbers, default=0)
    if len(parts) == 1:
        return parts[0]
    return "WITH " + ", ".join(f"w{i} AS ({p})" for i, p in enumerate(parts[:-1])) + " " + parts[-1]


def _advance(unit: Unit[Any], value: Any) -> tuple[bool, Any]:
    """(False, the unit's next statement) or (True, its result): a step that can run on a worker thread
    (a `StopIteration` cannot cross a future)."""
    try:
        return False, unit.send(value)
    except StopIteration as stop:
        return True, stop.value


def _decoded(prepared: Any, raw: list[Any]) -> list[Any]:
    return [prepared.decode(r) for r in raw]


async def _no_reset(_conn: Any) -> None:
    """Release without the default reset query: this path sets no session state to undo."""


async def _json_codecs(conn: Any) -> None:
    """JSON and JSONB as SQLAlchemy's asyncpg dialect sets them on its own connections
    (`setup_asyncpg_json_codec`): a value arrives already serialized by the column type's bind processor
    and is decoded to Python on the way back, so a unit that touches a JSON column (a thread's
    `tool_calls`, `meta`) runs here with the same values it has on the engine."""
    await conn.set_type_codec(
        "json",
        encoder=str.encode,
        decoder=lambda b: json.loads(b.decode()),
        schema="pg_catalog",
        format="binary",
    )
    await conn.set_type_codec(
        "jsonb",
        encoder=lambda s: b"\x01" + s.encode(),
        decoder=lambda b: json.loads(b[1:].decode()),
        schema="pg_catalog",
        format="binary",
    )


def asyncpg_dsn(url: str) -> str:
    """The libpq-style DSN asyncpg takes for an SQLAlchemy `postgresql+asyncpg://` URL."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class DirectPostgres:
    """An asyncpg pool next to the Store's engine, on the same database."""

    def __init__(self, pool: Any, dialect: Dialect) -> None:
        self._pool = pool
        self.statements = Statements(dialect)
        self._combined: dict[tuple[tuple[str, tuple[str, ...], int], ...], str] = {}
        self._returning: dict[tuple[str, tuple[str, ...], int], str] = {}
        self.commits = 0
        """Transactions committed on this pool (`Store.counts`)."""

    @classmethod
    async def open(cls, url: str, dialect: Dialect) -> DirectPostgres:
        import asyncpg

        pool = await asyncpg.create_pool(
            asyncpg_dsn(url),
            min_size=0,
            max_size=POOL_SIZE,
            max_inactive_connection_lifetime=IDLE_CLOSE_S,
            reset=_no_reset,
            init=_json_codecs,
        )
        return cls(pool, dialect)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Any]:
        """A pooled connection inside `BEGIN … COMMIT` (rolled back when the block raises)."""
        async with self._pool.acquire() as conn, conn.transaction():
            yield conn

    async def run_unit(self, unit: Unit[T], *, off_loop: bool = False, snapshot: bool = True) -> T:
        """Drive `unit` on a pooled connection inside `BEGIN … COMMIT` (rolled back when it raises).

        Inserts are held back until the unit reads again or ends, then sent as ONE statement (data-
        modifying CTEs: all rows or none): an issuance's coupon and audit row cost one round trip.
        With `off_loop` (an incident's grant batch) the unit's own Python work — its decisions between
        statements, decoding the rows it read, binding the rows it writes — runs on a worker thread, one
        step at a time; only the driver's I/O stays on the event loop, so live conversations keep their
        latency while hundreds of coupons are decided. An insert that asks for its rows' ids sends its rows
        as one multi-row statement. A read of one statement (`snapshot` False) runs without BEGIN and
        COMMIT: one round trip instead of three.
        """
        if not snapshot:
            async with self._pool.acquire() as conn:
                return await self._drive(conn, unit, off_loop)
        async with self.transaction() as conn:
            out = await self._drive(conn, unit, off_loop)
        self.commits += 1
        return out

    async def _drive(self, conn: Any, unit: Unit[T], off_loop: bool) -> T:
        statements = self.statements
        held: list[tuple[Insert, dict[str, Any]]] = []
        result: Any = None
        while True:
            done, op = await asyncio.to_thread(_advance, unit, result) if off_loop else _advance(unit, result)
            if done:
                await self._insert(conn, held, unit, off_loop)
                return op  # type: ignore[no-any-return]
            result = None
            if isinstance(op, Insert) and not op.ids:
                held.extend((op, dict(row)) for row in op.rows)
                continue
            await self._insert(conn, held, unit, off_loop)
            if isinstance(op, Insert):
                result = await self._insert_returning_ids(conn, op, unit)
                continue
            statements.executed += 1
            prepared = statements(op.query)
            if isinstance(op, Fetch):
                raw = await conn.fetch(prepared.sql, *prepared.args(op.params))
                rows = (
                    await asyncio.to_thread(_decoded, prepared, raw) if off_loop else _decoded(prepared, raw)
                )
                result = (rows[0] if rows else None) if op.one else rows
            elif isinstance(op, Lock):
                await conn.execute(prepared.sql, *prepared.args(op.params))
            else:
                raise TypeError(f"not a store statement: {op!r}")

    async def _insert_returning_ids(self, conn: Any, op: Insert, unit: Unit[Any]) -> list[int]:
        """`op`'s rows in one `INSERT … VALUES (…), (…) RETURNING id`; their ids in the rows' order.

        The ids come from the table's sequence, drawn row by row in the VALUES order, so they rise with
        the rows; sorted, they are in the rows' order whatever order RETURNING lists them in."""
        import asyncpg

        if not op.rows:
            return []
        single = self.statements(insert_statement(op.table, op.columns))
        key = (op.table.name, op.columns, len(op.rows))
        sql = self._returning.get(key)
        if sql is None:
            rows_sql, returning = self._rows_sql(insert_statement(op.table, op.columns), len(op.rows))
            sql = self._returning[key] = f"{rows_sql} RETURNING {returning or 'id'}"
        args: list[Any] = []
        for row in op.rows:
            args.extend(single.args(row))
        self.statements.executed += 1
        try:
            found = await conn.fetch(sql, *args)
        except asyncpg.UniqueViolationError as exc:
            unit.close()
            raise RaceLost() from exc
        return sorted(int(r[0]) for r in found)

    def _statement(self, held: list[tuple[Insert, dict[str, Any]]]) -> tuple[str, list[Any]]:
        """The held rows as one statement (built once per shape of rows) and its arguments: the rows of
        one table and columns as one multi-row `VALUES` list, in the order they were held (PostgreSQL runs
        the sub-statements of a `WITH` in no set order, so rows of one table in CTEs of their own got
        their ids in no set order either), the tables' inserts combined (`_combine`)."""
        groups: dict[tuple[Any, tuple[str, ...]], list[dict[str, Any]]] = {}
        for op, row in held:
            groups.setdefault((op.table, op.columns), []).append(row)
        key = tuple((table.name, columns, len(rows)) for (table, columns), rows in groups.items())
        combined = self._combined.get(key)
        if combined is None:
            combined = self._combined[key] = _combine(
                [
                    self._rows_sql(insert_statement(table, columns), len(rows))[0]
                    for (table, columns), rows in groups.items()
                ]
            )
        args: list[Any] = []
        for (table, columns), rows in groups.items():
            prepared = self.statements(insert_statement(table, columns))
            for row in rows:
                args.extend(prepared.args(row))
        return combined, args

    def _rows_sql(self, statement: Any, rows: int) -> tuple[str, str]:
        """`statement` (a one-row INSERT) for `rows` rows: `INSERT … VALUES (…), (…)` with its parameters
        numbered on, and what the dialect's own statement returns (`RETURNING …`, or "")."""
        single = self.statements(statement).sql
        head, _, values = single.partition(" VALUES ")
        values, _, returning = values.partition(" RETURNING ")  # the dialect returns the key already
        width = len(re.findall(r"\$(\d+)", values))
        listed = [
            re.sub(r"\$(\d+)", lambda m, o=i * width: f"${int(m.group(1)) + o}", values) for i in range(rows)
        ]
        return f"{head} VALUES {', '.join(listed)}", returning

    async def _insert(
        self, conn: Any, held: list[tuple[Insert, dict[str, Any]]], unit: Unit[Any], off_loop: bool = False
    ) -> None:
        """The held rows in one statement (several when they bind more than `MAX_ARGS` values), in order;
        a unique constraint that refuses one raises `RaceLost`."""
        import asyncpg

        chunks: list[list[tuple[Insert, dict[str, Any]]]] = []
        size = MAX_ARGS
        for item in held:
            if size + len(item[0].columns) > MAX_ARGS:
                chunks.append([])
                size = 0
            chunks[-1].append(item)
            size += len(item[0].columns)
        held.clear()
        for chunk in chunks:
            # A batch's first statement of its shape is built by hundreds of regex substitutions: off the loop too.
            combined, args = (
                await asyncio.to_thread(self._statement, chunk) if off_loop else self._statement(chunk)
            )
            self.statements.executed += 1
            try:
                await conn.execute(combined, *args)
            except asyncpg.UniqueViolationError as exc:
                unit.close()
                raise RaceLost() from exc

    async def close(self) -> None:
        """Wait briefly for connections in use to come back, then drop whatever is still out."""
        try:
            await asyncio.wait_for(self._pool.close(), CLOSE_WAIT_S)
        except TimeoutError:
            self._pool.terminate()
