"""The coupon ledger's reads in a session (`Store.coupons.locked_session`): live coupons, a key's
coupon, the active coupons a claim names, and the plain view of a coupon that results and the claim
check carry."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store import Coupon, Store
from bot.store.coupons import LIVE_STATUSES
from tools.local_time import local_date


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
class ActiveCoupon:
    """An active coupon as the claim check needs it."""

    order_id: str
    amount: int
    code: str


async def active_coupons(
    store: Store | None, *, orders: Iterable[str] = (), codes: Iterable[str] = ()
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
