"""The plain view of a coupon that results and the claim check carry. The ledger's reads in a session
(live coupons, a key's coupon) are store functions: `bot.store.coupon_lookups`."""

from __future__ import annotations

from typing import Any

from bot.store import Coupon
from tools.local_time import local_date


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
