"""The coupon ledger's reads in a session (`Store.coupons.locked_session`): live coupons, a key's
coupon, and the plain view of a coupon that results and the claim check carry."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store import Coupon
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
