"""Orders' storage: one order with the coupon that holds its slot, as `lookup_order` reads it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, select

from bot.store.coupons import LIVE_STATUSES, CouponRow
from bot.store.models import Coupon, Order
from bot.store.units import Fetch, Unit, UnitRunner

_ORDER_AND_LIVE_COUPON = (
    select(
        Order.id,
        Order.player_id,
        Order.item,
        Order.amount,
        Order.status,
        Order.ordered_at,
        *(getattr(Coupon, c).label(f"coupon_{c}") for c in ("code", "amount", "status", "expires_at")),
    )
    .outerjoin(Coupon, and_(Coupon.order_id == Order.id, Coupon.status.in_(LIVE_STATUSES)))
    .where(Order.id == bindparam("order_id", None))
    .order_by(Coupon.id.desc())
    .limit(1)
)


@dataclass(frozen=True)
class OrderView:
    """An order as the order tools read it, with the coupon that holds its slot (active or pending)."""

    id: str
    player_id: str
    item: str
    amount: int
    status: str
    ordered_at: datetime | None
    live_coupon: CouponRow | None
    """Only the code, amount, status and expiry are read (the other fields are empty)."""


def _view(row: Any) -> OrderView:
    coupon = None
    if row.coupon_code is not None:
        coupon = CouponRow(
            id=None,
            code=row.coupon_code,
            order_id=row.id,
            player_id=row.player_id,
            amount=row.coupon_amount,
            status=row.coupon_status,
            reason=None,
            issued_by="",
            idempotency_key=None,
            created_at=None,
            expires_at=row.coupon_expires_at,
            revoked_at=None,
        )
    return OrderView(row.id, row.player_id, row.item, row.amount, row.status, row.ordered_at, coupon)


class Orders:
    """`store.orders`: an order and its live coupon, in one compiled read."""

    def __init__(self, store: UnitRunner) -> None:
        self._store = store

    async def with_live_coupon(self, order_id: str) -> OrderView | None:
        """The order `order_id` (None when there is none) and the coupon holding its slot, if any."""

        def unit() -> Unit[OrderView | None]:
            row = yield Fetch(_ORDER_AND_LIVE_COUPON, {"order_id": order_id}, one=True)
            return None if row is None else _view(row)

        return await self._store.run(unit, write=False, snapshot=False)
