"""The staff's read-only totals (`tools.ops_readonly`): orders and coupons counted and summed by status
over a period, from the built-in tables."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from bot.store.database import Store
from bot.store.models import Coupon, Order


@dataclass(frozen=True)
class OrderTotal:
    orders: int
    players: int
    """Distinct players who placed them."""
    amount: int


async def order_totals(
    store: Store, *, start: datetime | None, end: datetime | None, status: str | None
) -> dict[str, OrderTotal]:
    """By order status: orders placed in [start, end) (an open side when None), only `status`'s when given."""
    query = select(
        Order.status,
        func.count(Order.id),
        func.count(func.distinct(Order.player_id)),
        func.coalesce(func.sum(Order.amount), 0),
    ).group_by(Order.status)
    if start is not None:
        query = query.where(Order.ordered_at >= start)
    if end is not None:
        query = query.where(Order.ordered_at < end)
    if status is not None:
        query = query.where(Order.status == status)
    async with store.session() as session:
        rows = (await session.execute(query)).all()
    return {row[0]: OrderTotal(int(row[1]), int(row[2]), int(row[3])) for row in rows}


async def coupon_totals_by_status(
    store: Store, *, start: datetime | None, end: datetime | None
) -> dict[str, tuple[int, int]]:
    """By coupon status: (count, amount) of the coupons created in [start, end) (open side when None)."""
    query = select(Coupon.status, func.count(Coupon.id), func.coalesce(func.sum(Coupon.amount), 0)).group_by(
        Coupon.status
    )
    if start is not None:
        query = query.where(Coupon.created_at >= start)
    if end is not None:
        query = query.where(Coupon.created_at < end)
    async with store.session() as session:
        rows = (await session.execute(query)).all()
    return {row[0]: (int(row[1]), int(row[2])) for row in rows}
