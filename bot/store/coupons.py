"""The coupon ledger's storage: the facts an issuance checks, the issuance unit (lock, facts, coupon and
audit row in one transaction) and the locked session of the staff's changes. The rules that decide
live in `tools.ledger`; here the database's unique indexes (idempotency key, one live coupon per
order, coupon code) still decide every race, reported as `RaceLost`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Generic, TypeVar

from sqlalchemy import Integer, String, bindparam, column, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.backends.engine import begin_immediate
from bot.store.game_deliveries import JOB_COLUMNS, GameDeliveries, GameDelivery, grant_job
from bot.store.game_order_facts import FACT_COLUMNS, GameOrderFacts, fact_row
from bot.store.models import AuditEntry, Coupon, Order, Player, UTCDateTime
from bot.store.units import Fetch, Insert, Lock, Unit, UnitRunner

T = TypeVar("T")

LIVE_STATUSES = ("active", "pending")
"""Statuses that hold an order's one coupon slot and count against the player's daily caps."""


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


COUPON_COLUMNS = tuple(f.name for f in fields(CouponRow))
INSERTED_COLUMNS = tuple(c for c in COUPON_COLUMNS if c not in ("id", "revoked_at"))
AUDIT_COLUMNS = ("at", "actor", "thread_id", "action", "target", "code", "detail")


@dataclass(frozen=True)
class ActiveCoupon:
    """An active coupon as the claim check needs it."""

    order_id: str
    amount: int
    code: str


_ACTIVE = select(Coupon.order_id, Coupon.amount, Coupon.code).where(Coupon.status == "active")
_ACTIVE_BY_ORDER = _ACTIVE.where(Coupon.order_id == bindparam("order_id", None))
_ACTIVE_BY_CODE = _ACTIVE.where(Coupon.code == bindparam("code", None))


@dataclass(frozen=True)
class DailyUsage:
    """Live coupons a player received on one local calendar day: how many, and their total."""

    count: int
    amount: int


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
    order_amount: int | None = None
    order_currency: str | None = None
    order_updated_at: datetime | None = None


@dataclass(frozen=True)
class IssueWrite(Generic[T]):
    """What an issuance decided on its facts: the coupon to insert (or None), its audit row, and the
    outcome handed back to the caller."""

    coupon: CouponRow | None
    audit: dict[str, Any]
    outcome: T
    order_facts: dict[str, Any] | None = None
    """The order facts the coupon was decided on (`OrderRecord.facts()`), kept beside it."""


def _cols(alias: str) -> str:
    return ", ".join(f"{alias}.{c}" for c in COUPON_COLUMNS)


_LIVE = "status IN ('active', 'pending')"  # LIVE_STATUSES; matches the partial index
_DAY = f"d.player_id = o.player_id AND d.{_LIVE} AND d.created_at >= :day_start AND d.created_at < :day_end"
FACTS_SQL = f"""SELECT o.player_id, o.status, {_cols("k")}, {_cols("l")},
 (SELECT count(d.id) FROM coupons AS d WHERE {_DAY}),
 (SELECT coalesce(sum(d.amount), 0) FROM coupons AS d WHERE {_DAY}),
 o.amount, o.currency, o.updated_at
FROM (SELECT 1 AS one) AS anchor
LEFT JOIN orders AS o ON o.id = :order_id
LEFT JOIN coupons AS k ON k.idempotency_key = :key
LEFT JOIN coupons AS l ON l.id = (
 SELECT c.id FROM coupons AS c WHERE c.order_id = :order_id AND c.{_LIVE} ORDER BY c.id DESC LIMIT 1)"""
"""The idempotency key's coupon, the order, its live coupon and the owner's usage today (one row)."""


def _coupon_columns(alias: str) -> list[Any]:
    return [column(f"{alias}_{name}", Coupon.__table__.c[name].type) for name in COUPON_COLUMNS]


FACTS = (
    text(FACTS_SQL)
    .bindparams(
        bindparam("order_id", type_=String()),
        bindparam("key", type_=String()),
        bindparam("day_start", type_=UTCDateTime()),
        bindparam("day_end", type_=UTCDateTime()),
    )
    .columns(  # read by position, with each column's own type (dates come back aware, in UTC)
        column("order_player_id", String()),
        column("order_status", String()),
        *_coupon_columns("k"),
        *_coupon_columns("l"),
        column("day_count", Integer()),
        column("day_amount", Integer()),
        column("order_amount", Integer()),
        column("order_currency", String()),
        column("order_updated_at", UTCDateTime()),
    )
)

LOCK_PLAYER = select(Player.id).where(Player.id == bindparam("player_id")).with_for_update(key_share=True)
"""One player's issuances take turns (their daily caps). NO KEY UPDATE still serialises them, but not
the foreign-key check (KEY SHARE) of a staff insert for this player's order: a plain FOR UPDATE
deadlocked there, the staff insert waiting for this lock while this transaction's insert waited on the
staff row's unique-index entry."""
LOCK_ORDER = select(Order.id).where(Order.id == bindparam("order_id")).with_for_update(key_share=True)
"""Revoke and approve of one order take turns, so an approve racing a revoke cannot report "approved"
for a coupon the revoke then rejects; NO KEY UPDATE leaves coupon inserts' foreign-key checks free."""


def _coupon(values: Any) -> CouponRow | None:
    return CouponRow(*values) if values[0] is not None else None


def facts_of(row: Any) -> IssueFacts:
    """An `IssueFacts` from the row of `FACTS` (read by position)."""
    width = len(COUPON_COLUMNS)
    return IssueFacts(
        key_coupon=_coupon(tuple(row[2 : 2 + width])),
        order_player_id=row[0],
        order_status=row[1],
        live_coupon=_coupon(tuple(row[2 + width : 2 + 2 * width])),
        day=DailyUsage(count=int(row[2 + 2 * width] or 0), amount=int(row[3 + 2 * width] or 0)),
        order_amount=row[4 + 2 * width],
        order_currency=row[5 + 2 * width],
        order_updated_at=row[6 + 2 * width],
    )


def _fact_params(order_id: str, key: str | None, day: tuple[datetime, datetime]) -> dict[str, Any]:
    return {"order_id": order_id, "key": key, "day_start": day[0], "day_end": day[1]}


class CouponLedger:
    """`store.coupons`: the issuance unit, the facts it reads, and the locked session of staff changes."""

    def __init__(self, store: UnitRunner, deliveries: GameDeliveries | None = None) -> None:
        self._store = store
        self._deliveries = deliveries

    def _delivers(self, coupon: CouponRow) -> bool:
        """An active coupon is granted into the game (`ARCA_COUPON_DELIVERY=game`); a pending one when
        it is approved."""
        return self._deliveries is not None and self._deliveries.enabled and coupon.status == "active"

    async def facts(self, order_id: str, key: str | None, day: tuple[datetime, datetime]) -> IssueFacts:
        """The facts an issuance of `order_id` would check now (outside any write)."""

        def unit() -> Unit[IssueFacts]:
            return facts_of((yield Fetch(FACTS, _fact_params(order_id, key, day), one=True)))

        return await self._store.run(unit, write=False, snapshot=False, plain=True)

    async def issue(
        self,
        *,
        player_id: str | None,
        order_id: str,
        key: str | None,
        day: tuple[datetime, datetime],
        decide: Callable[[IssueFacts], IssueWrite[T]],
    ) -> T:
        """One issuance transaction: `player_id`'s lock, one SELECT of the facts, `decide` (pure; it may
        run again from the start), then the decided coupon and its audit row. Raises `RaceLost` when a
        unique index refuses the coupon: nothing of the attempt is stored then."""

        def unit() -> Unit[T]:
            if player_id is not None:
                yield Lock(LOCK_PLAYER, {"player_id": player_id})
            write = decide(facts_of((yield Fetch(FACTS, _fact_params(order_id, key, day), one=True))))
            if write.coupon is not None:
                row = {c: getattr(write.coupon, c) for c in INSERTED_COLUMNS}
                yield Insert(Coupon.__table__, INSERTED_COLUMNS, [row])
                if write.order_facts is not None:  # the facts it was decided on, in the same transaction
                    facts = fact_row(write.coupon.code, write.order_facts)
                    yield Insert(GameOrderFacts.__table__, FACT_COLUMNS, [facts])
                if self._delivers(write.coupon):  # the outbox job commits with the coupon, or neither does
                    yield Insert(GameDelivery.__table__, JOB_COLUMNS, [grant_job(row)])
            yield Insert(AuditEntry.__table__, AUDIT_COLUMNS, [write.audit])
            return write.outcome

        return await self._store.run(unit, write=True, plain=True)

    async def active(self, *, orders: Iterable[str] = (), codes: Iterable[str] = ()) -> list[ActiveCoupon]:
        """Active coupons on any of `orders` or with any of `codes` (nothing asked: nothing returned)."""
        asked = [(_ACTIVE_BY_ORDER, {"order_id": o}) for o in dict.fromkeys(orders)]
        asked += [(_ACTIVE_BY_CODE, {"code": c}) for c in dict.fromkeys(codes)]
        if not asked:
            return []

        # One small compiled query per order and per code (a claim names one or two): no statement
        # built and compiled per call; on SQLite the reads run on the loop thread's connection.
        def unit() -> Unit[list[ActiveCoupon]]:
            found: dict[str, ActiveCoupon] = {}
            for query, params in asked:
                for row in (yield Fetch(query, params)):
                    found.setdefault(row.code, ActiveCoupon(row.order_id, row.amount, row.code))
            return list(found.values())

        return await self._store.run(unit, write=False, snapshot=False)

    @asynccontextmanager
    async def locked_session(
        self, *, player_id: str | None = None, order_id: str | None = None
    ) -> AsyncIterator[AsyncSession]:
        """A session for a change of the ledger, serialised with the issuances and changes it could race:
        SQLite takes the file's write lock (`BEGIN IMMEDIATE`), PostgreSQL the player's and the order's
        rows. The caller commits."""
        async with self._store.session() as session:
            conn = await session.connection()
            if conn.dialect.name == "sqlite":
                await begin_immediate(conn)
            else:
                if player_id is not None:
                    await session.execute(LOCK_PLAYER, {"player_id": player_id})
                if order_id is not None:
                    await session.execute(LOCK_ORDER, {"order_id": order_id})
            yield session
