"""What the staff console, the dashboard and replay read about coupons: a filtered page of coupons with
their orders, the coupons issued in a window, the active ones, and why a pending coupon waits."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select

from bot.store.database import Store
from bot.store.models import AuditEntry, Coupon, Order


@dataclass(frozen=True)
class CouponQuery:
    """Which coupons a page asks for; an empty field does not filter."""

    player: str = ""
    order: str = ""
    """Matched exactly (the caller upper-cases it)."""
    status: str = ""
    day_start: datetime | None = None
    """Coupons created in the 24 hours from this instant."""


async def coupons_with_orders(
    store: Store, q: CouponQuery, *, limit: int | None, offset: int = 0
) -> list[tuple[Coupon, Order | None]]:
    """The coupons of `q`, newest first, each with its order (None when the order row is missing)."""
    query = select(Coupon, Order).join(Order, Order.id == Coupon.order_id, isouter=True)
    if q.player:
        query = query.where(Coupon.player_id == q.player)
    if q.order:
        query = query.where(Coupon.order_id == q.order)
    if q.status:
        query = query.where(Coupon.status == q.status)
    if q.day_start is not None:
        query = query.where(
            Coupon.created_at >= q.day_start, Coupon.created_at < q.day_start + timedelta(days=1)
        )
    query = query.order_by(Coupon.id.desc()).limit(limit).offset(offset)
    async with store.session() as s:
        return [(c, o) for c, o in (await s.execute(query)).all()]


@dataclass(frozen=True)
class IssueAsked:
    """The newest `coupon.issue` audit of an order: the thread that asked, its code and its detail."""

    thread_id: str | None
    code: str | None
    detail: str | None


async def issue_audits(store: Store, order_ids: list[str]) -> dict[str, IssueAsked]:
    """For each order id, its newest `coupon.issue` audit row (orders without one are left out)."""
    out: dict[str, IssueAsked] = {}
    async with store.session() as s:
        for order_id in order_ids:
            asked = (
                await s.execute(
                    select(AuditEntry.thread_id, AuditEntry.detail, AuditEntry.code)
                    .where(AuditEntry.target == order_id, AuditEntry.action == "coupon.issue")
                    .order_by(AuditEntry.id.desc())
                    .limit(1)
                )
            ).one_or_none()
            if asked is not None:
                out[order_id] = IssueAsked(asked.thread_id, asked.code, asked.detail)
    return out


@dataclass(frozen=True)
class IssuedCoupon:
    player_id: str
    amount: int
    created_at: datetime


async def issued_between(
    store: Store, *, since: datetime, until: datetime, statuses: tuple[str, ...]
) -> list[IssuedCoupon]:
    """Coupons in `statuses` created from `since` to `until` (both included)."""
    async with store.session() as s:
        rows = (
            await s.execute(
                select(Coupon.player_id, Coupon.amount, Coupon.created_at).where(
                    Coupon.status.in_(statuses), Coupon.created_at >= since, Coupon.created_at <= until
                )
            )
        ).all()
    return [IssuedCoupon(p, int(a), c) for p, a, c in rows]


async def active_coupon_amounts(store: Store) -> list[tuple[str, int]]:
    """(order id, amount) of every active coupon."""
    async with store.session() as s:
        rows = (
            await s.execute(select(Coupon.order_id, Coupon.amount).where(Coupon.status == "active"))
        ).all()
    return [(o, a) for o, a in rows]
