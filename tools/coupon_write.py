"""The issuance's statements: one SELECT of every fact the rules check, then the coupon and audit inserts.

The same SQL runs on the loop-thread SQLite connection (`bot.store.direct`, plain `sqlite3`, values
converted exactly as SQLAlchemy stores them) and on an async session (PostgreSQL, in-memory SQLite).
No ORM objects: the facts come back as one row, a coupon as a `CouponRow`. The statements are text
compiled once; the database's unique indexes (idempotency key, one live coupon per order, coupon code)
still decide every race, and the audit row is written in the coupon's own transaction.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store import AuditEntry, Coupon
from bot.store.direct import DirectSQLite
from bot.store.models import UTCDateTime
from tools.coupon_queries import DailyUsage


class RaceLost(Exception):
    """The insert hit a unique constraint: another issuance (or the same key) got there first."""


@dataclass(frozen=True, slots=True)
class CouponRow:
    """A stored coupon as the rules and the results read it (the attributes of `bot.store.Coupon`)."""

    id: int | None
    code: str
    order_id: str
    player_id: str
    amount: int
    status: str
    reason: str | None
    issued_by: str
    idempotency_key: str | None
    created_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None


COUPON_COLUMNS = [f.name for f in fields(CouponRow)]
_DATES = ("created_at", "expires_at", "revoked_at")
INSERTED_COLUMNS = [c for c in COUPON_COLUMNS if c not in ("id", "revoked_at")]
AUDIT_COLUMNS = ["at", "actor", "thread_id", "action", "target", "code", "detail"]


@dataclass(frozen=True)
class IssueFacts:
    """Everything an issuance checks, read in one statement inside its write transaction."""

    key_coupon: CouponRow | None
    """The coupon an earlier call with the same idempotency key created."""
    order_player_id: str | None
    order_status: str | None
    live_coupon: CouponRow | None
    """The order's coupon that holds its slot (active or pending), the newest if several."""
    day: DailyUsage
    """The order owner's live coupons created on the request's local calendar day."""


def _cols(alias: str) -> str:
    return ", ".join(f"{alias}.{c}" for c in COUPON_COLUMNS)


_LIVE = "status IN ('active', 'pending')"  # tools.coupon_queries.LIVE_STATUSES; matches the partial index
_DAY = f"d.player_id = o.player_id AND d.{_LIVE} AND d.created_at >= :day_start AND d.created_at < :day_end"
FACTS_SQL = f"""SELECT o.player_id, o.status, {_cols("k")}, {_cols("l")},
 (SELECT count(d.id) FROM coupons AS d WHERE {_DAY}),
 (SELECT coalesce(sum(d.amount), 0) FROM coupons AS d WHERE {_DAY})
FROM (SELECT 1 AS one) AS anchor
LEFT JOIN orders AS o ON o.id = :order_id
LEFT JOIN coupons AS k ON k.idempotency_key = :key
LEFT JOIN coupons AS l ON l.id = (
 SELECT c.id FROM coupons AS c WHERE c.order_id = :order_id AND c.{_LIVE} ORDER BY c.id DESC LIMIT 1)"""
"""The idempotency key's coupon, the order, its live coupon and the owner's usage today (one row)."""

_FACTS = text(FACTS_SQL).bindparams(
    bindparam("day_start", type_=UTCDateTime()), bindparam("day_end", type_=UTCDateTime())
)


def _values(names: list[str], prefix: str = "") -> str:
    return ", ".join(f":{prefix}{n}" for n in names)


_TYPED = [bindparam(n, type_=UTCDateTime()) for n in ("created_at", "expires_at")]
INSERT_BOTH_PG_SQL = (
    f"WITH c AS (INSERT INTO coupons ({', '.join(INSERTED_COLUMNS)}) VALUES ({_values(INSERTED_COLUMNS)})) "
    f"INSERT INTO audit ({', '.join(AUDIT_COLUMNS)}) VALUES ({_values(AUDIT_COLUMNS, 'a_')})"
)
"""PostgreSQL: the coupon and its audit row in one statement (one round trip; both or neither)."""
_INSERT_BOTH_PG = text(INSERT_BOTH_PG_SQL).bindparams(*_TYPED, bindparam("a_at", type_=UTCDateTime()))


def _numbered(sql: str) -> tuple[str, list[str]]:
    """`:name` placeholders as asyncpg's `$1 … $n`, and the names in that order."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(1) not in names:
            names.append(match.group(1))
        return f"${names.index(match.group(1)) + 1}"

    return re.sub(r"(?<![:\w]):(\w+)", number, sql), names


_FACTS_PG, _FACTS_PG_ARGS = _numbered(FACTS_SQL)
_INSERT_BOTH_PG_RAW, _INSERT_BOTH_PG_ARGS = _numbered(INSERT_BOTH_PG_SQL)
_INSERT_AUDIT_PG, _INSERT_AUDIT_PG_ARGS = _numbered(
    f"INSERT INTO audit ({', '.join(AUDIT_COLUMNS)}) VALUES ({_values(AUDIT_COLUMNS, 'a_')})"
)
LOCK_PLAYER_PG = "SELECT 1 FROM players WHERE id = $1 FOR NO KEY UPDATE"
"""`tools.coupon_queries.begin_write` on a plain asyncpg connection: issuances of one player take turns."""


class _Readers:
    """How a dialect turns the stored dates of a facts row back into aware datetimes."""

    def __init__(self, dialect: Dialect) -> None:
        process = UTCDateTime()._cached_result_processor(dialect, None)
        self.date: Callable[[Any], Any] = process if process is not None else (lambda v: v)
        bind = UTCDateTime()._cached_bind_processor(dialect)
        self.bind: Callable[[Any], Any] = bind if bind is not None else (lambda v: v)

    def coupon(self, values: tuple[Any, ...]) -> CouponRow | None:
        if values[0] is None:
            return None
        row = dict(zip(COUPON_COLUMNS, values, strict=True))
        for name in _DATES:
            row[name] = self.date(row[name])
        return CouponRow(**row)

    def facts(self, row: Any) -> IssueFacts:
        width = len(COUPON_COLUMNS)
        return IssueFacts(
            key_coupon=self.coupon(tuple(row[2 : 2 + width])),
            order_player_id=row[0],
            order_status=row[1],
            live_coupon=self.coupon(tuple(row[2 + width : 2 + 2 * width])),
            day=DailyUsage(count=int(row[-2] or 0), amount=int(row[-1] or 0)),
        )


_readers: dict[tuple[str, str], _Readers] = {}


def _readers_for(dialect: Dialect) -> _Readers:
    key = (dialect.name, dialect.driver)
    readers = _readers.get(key)
    if readers is None:
        readers = _readers[key] = _Readers(dialect)
    return readers


class _PgReaders(_Readers):
    """asyncpg hands timestamptz back as aware datetimes already; only normalised to UTC."""

    def __init__(self) -> None:
        self.date = _utc
        self.bind = _utc


def _utc(value: Any) -> Any:
    return value.astimezone(UTC) if value is not None else None


_PG_READERS = _PgReaders()


def _fact_params(order_id: str, key: str | None, day: tuple[datetime, datetime]) -> dict[str, Any]:
    return {"order_id": order_id, "key": key, "day_start": day[0], "day_end": day[1]}


# ---- the loop-thread SQLite connection -----------------------------------------------------------


def read_facts_direct(
    direct: DirectSQLite, conn: sqlite3.Connection, order_id: str, key: str | None, day: Any
) -> IssueFacts:
    """`FACTS_SQL` on the plain sqlite3 connection, inside the caller's `BEGIN IMMEDIATE`."""
    readers = _readers_for(direct.dialect)
    params = _fact_params(order_id, key, day)
    params["day_start"], params["day_end"] = readers.bind(day[0]), readers.bind(day[1])
    return readers.facts(conn.execute(FACTS_SQL, params).fetchone())


def insert_direct(
    direct: DirectSQLite, conn: sqlite3.Connection, coupon: CouponRow | None, audit: dict[str, Any]
) -> None:
    """The coupon (when one is issued) and its audit row, in the caller's transaction."""
    if coupon is not None:
        codec = direct.codec(Coupon.__table__, INSERTED_COLUMNS)
        try:
            conn.execute(codec.insert_sql, codec.params({c: getattr(coupon, c) for c in INSERTED_COLUMNS}))
        except sqlite3.IntegrityError as exc:
            raise RaceLost() from exc
    codec = direct.codec(AuditEntry.__table__, AUDIT_COLUMNS)
    conn.execute(codec.insert_sql, codec.params(audit))


# ---- a plain asyncpg connection (`bot.store.direct_pg`) ------------------------------------------------


async def read_facts_pg(conn: Any, order_id: str, key: str | None, day: Any) -> IssueFacts:
    """`FACTS_SQL` on an asyncpg connection, after `LOCK_PLAYER_PG` in the same transaction (READ
    COMMITTED: this statement's snapshot includes everything the previous lock holder committed)."""
    params = _fact_params(order_id, key, day)
    row = await conn.fetchrow(_FACTS_PG, *(params[n] for n in _FACTS_PG_ARGS))
    return _PG_READERS.facts(row)


async def insert_pg(conn: Any, coupon: CouponRow | None, audit: dict[str, Any]) -> None:
    """The coupon (when one is issued) and its audit row in one statement."""
    import asyncpg

    values = {f"a_{k}": v for k, v in audit.items()}
    try:
        if coupon is None:
            await conn.execute(_INSERT_AUDIT_PG, *(values[n] for n in _INSERT_AUDIT_PG_ARGS))
            return
        values.update({c: getattr(coupon, c) for c in INSERTED_COLUMNS})
        await conn.execute(_INSERT_BOTH_PG_RAW, *(values[n] for n in _INSERT_BOTH_PG_ARGS))
    except asyncpg.UniqueViolationError as exc:
        raise RaceLost() from exc


# ---- an async session (PostgreSQL, in-memory SQLite) -------------------------------------------------


async def read_facts(session: AsyncSession, order_id: str, key: str | None, day: Any) -> IssueFacts:
    """`FACTS_SQL` through the session, after `begin_write`: every later statement sees the lock holder's
    commits (READ COMMITTED takes a new snapshot per statement)."""
    conn = await session.connection()
    row = (await conn.execute(_FACTS, _fact_params(order_id, key, day))).one()
    return _readers_for(conn.dialect).facts(row)


async def insert(session: AsyncSession, coupon: CouponRow | None, audit: dict[str, Any]) -> None:
    """The coupon (when one is issued) and its audit row; PostgreSQL in one statement."""
    conn = await session.connection()
    try:
        if coupon is None:
            await conn.execute(AuditEntry.__table__.insert(), audit)
        elif conn.dialect.name == "postgresql":
            values = {c: getattr(coupon, c) for c in INSERTED_COLUMNS}
            values.update({f"a_{k}": v for k, v in audit.items()})
            await conn.execute(_INSERT_BOTH_PG, values)
        else:
            await conn.execute(Coupon.__table__.insert(), {c: getattr(coupon, c) for c in INSERTED_COLUMNS})
            await conn.execute(AuditEntry.__table__.insert(), audit)
    except IntegrityError as exc:
        raise RaceLost() from exc
