"""The coupon ledger's SQL: reads of live coupons and daily usage, the write lock every change starts
with, and the plain view of a coupon that results and the claim check carry."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store import Coupon, Order, Player
from tools.local_time import local_date

LIVE_STATUSES = ("active", "pending")
"""Statuses that hold an order's one coupon slot and count against the player's daily caps."""


async def begin_write(
    session: AsyncSession, player_id: str | None = None, *, order_id: str | None = None
) -> None:
    """Start a serialised write: the read-check-insert must not interleave with another issuance.

    SQLite: `BEGIN IMMEDIATE` takes the database write lock before the first read, so checks and the
    insert see one consistent state. Other databases: lock the player's row (`FOR UPDATE`), which
    serialises issuances per player (the daily caps) while the unique index guards each order.
    PostgreSQL runs READ COMMITTED, so every statement after the lock sees what the previous holder
    committed (tests/scale prove both across two OS processes).
    """
    conn = await session.connection()
    if conn.dialect.name == "sqlite":
        raw = await conn.get_raw_connection()
        if not getattr(raw.driver_connection, "in_transaction", False):
            await conn.exec_driver_sql("BEGIN IMMEDIATE")
        return
    if player_id is not None:
        # NO KEY UPDATE (key_share=True) still serialises issuances of one player, but not the
        # foreign-key check (KEY SHARE) of a staff insert for this player's order. A plain FOR UPDATE
        # deadlocked there: the staff insert waited for this lock while this transaction's insert
        # waited on the staff row's unique-index entry.
        await session.execute(select(Player.id).where(Player.id == player_id).with_for_update(key_share=True))
    if order_id is not None:
        # Revoke and approve of one order take turns (PostgreSQL), so an approve racing a revoke cannot
        # report "approved" for a coupon the revoke then rejects. NO KEY UPDATE leaves the foreign-key
        # checks of concurrent coupon inserts unblocked.
        await session.execute(select(Order.id).where(Order.id == order_id).with_for_update(key_share=True))


async def live_coupon(session: AsyncSession, order_id: str) -> Coupon | None:
    """The order's coupon that holds its slot (active or pending), if any."""
    row = await session.execute(
        select(Coupon)
        .where(Coupon.order_id == order_id, Coupon.status.in_(LIVE_STATUSES))
        .order_by(Coupon.id.desc())
        .limit(1)
    )
    return row.scalar_one_or_none()


async def coupon_by_key(session: AsyncSession, key: str | None) -> Coupon | None:
    """The coupon an earlier call with this idempotency key created."""
    if not key:
        return None
    return (await session.execute(select(Coupon).where(Coupon.idempotency_key == key))).scalar_one_or_none()


@dataclass(frozen=True)
class DailyUsage:
    """Live coupons a player received on one local calendar day: how many, and their total."""

    count: int
    amount: int


@dataclass(frozen=True)
class ActiveCoupon:
    """An active coupon as the claim check needs it."""

    order_id: str
    amount: int
    code: str


async def active_coupons(
    store: Any, *, orders: Iterable[str] = (), codes: Iterable[str] = ()
) -> list[ActiveCoupon]:
    """Active coupons on any of `orders` or with any of `codes` (nothing asked: nothing returned)."""
    orders, codes = list(orders), list(codes)
    if store is None or not (orders or codes):
        return []
    found: dict[str, ActiveCoupon] = {}
    # One small compiled query per order and per code (a claim names one or two): no statement built
    # and compiled per call, the reads run on the loop thread's connection on SQLite.
    for query, key, values in ((_ACTIVE_BY_ORDER, "order_id", orders), (_ACTIVE_BY_CODE, "code", codes)):
        for value in dict.fromkeys(values):
            for row in await store.fetch(query, **{key: value}):
                found.setdefault(row.code, ActiveCoupon(row.order_id, row.amount, row.code))
    return list(found.values())


_ACTIVE = select(Coupon.order_id, Coupon.amount, Coupon.code).where(Coupon.status == "active")
_ACTIVE_BY_ORDER = _ACTIVE.where(Coupon.order_id == bindparam("order_id", None))
_ACTIVE_BY_CODE = _ACTIVE.where(Coupon.code == bindparam("code", None))


def coupon_view(coupon: Coupon, timezone: str | None = None) -> dict[str, Any]:
    """Plain facts about a coupon for `ToolResult.data` (the claim check and replay read these).

    With `timezone`, `expires_on` is the local expiry date the player was told.
    """
    view = {
        "code": coupon.code,
        "order_id": coupon.order_id,
        "player_id": coupon.player_id,
        "amount": coupon.amount,
        "status": coupon.status,
        "issued_by": coupon.issued_by,
        "created_at": coupon.created_at.isoformat() if coupon.created_at else None,
        "expires_at": coupon.expires_at.isoformat() if coupon.expires_at else None,
    }
    if timezone is not None:
        view["expires_on"] = local_date(coupon.expires_at, timezone) or None
    return view
