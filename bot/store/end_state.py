"""The end state of a conversation's world, as a simulation grades it: coupons, escalations and order
statuses, read in one session (`arca-bot simulate` runs each trial in a database of its own)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from bot.store.coupons import LIVE_STATUSES
from bot.store.database import Store
from bot.store.models import Coupon, Escalation, Order


@dataclass(frozen=True)
class EndState:
    active_coupons: list[tuple[str, int]]
    """(order id, amount) of every active coupon."""
    live_coupon_orders: frozenset[str]
    """Orders holding an active or pending coupon."""
    escalations: int
    """Escalations to a person opened (any status)."""
    order_statuses: dict[str, str]


async def read_end_state(store: Store) -> EndState:
    async with store.session() as s:
        coupons = (await s.execute(select(Coupon.order_id, Coupon.amount, Coupon.status))).all()
        escalations = (await s.execute(select(func.count(Escalation.id)))).scalar_one()
        statuses = {o: st for o, st in (await s.execute(select(Order.id, Order.status))).all()}
    return EndState(
        active_coupons=sorted((o, a) for o, a, st in coupons if st == "active"),
        live_coupon_orders=frozenset(o for o, _a, st in coupons if st in LIVE_STATUSES),
        escalations=int(escalations),
        order_statuses=statuses,
    )
