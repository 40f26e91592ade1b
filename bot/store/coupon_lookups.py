"""The coupon tools' reads: inside a ledger session (`Store.coupons.locked_session`) the order row, its live
coupon, an idempotency key's coupon, an order's latest request and the audit row that decided it; on their
own, the newest coupons (of a player) and a player's coupons of one incident."""

from __future__ import annotations

from sqlalchemy import select

from bot.store.coupons import LIVE_STATUSES
from bot.store.database import Store, StoreSession
from bot.store.models import AuditEntry, Coupon, Order


async def order_in(session: StoreSession, order_id: str) -> Order | None:
    """The order row, read inside the caller's (locked) session."""
    return await session.get(Order, order_id)


async def live_coupon(session: StoreSession, order_id: str) -> Coupon | None:
    """The order's coupon that holds its slot (active or pending), if any."""
    row = await session.execute(
        select(Coupon)
        .where(Coupon.order_id == order_id, Coupon.status.in_(LIVE_STATUSES))
        .order_by(Coupon.id.desc())
        .limit(1)
    )
    return row.scalar_one_or_none()


async def coupon_by_key(session: StoreSession, key: str | None) -> Coupon | None:
    """The coupon an earlier call with this idempotency key created."""
    if not key:
        return None
    return (await session.execute(select(Coupon).where(Coupon.idempotency_key == key))).scalar_one_or_none()


async def latest_coupon_of_order(session: StoreSession, order_id: str) -> Coupon | None:
    """The order's newest coupon, whatever its status."""
    return (
        await session.execute(
            select(Coupon)
            .where(Coupon.order_id == order_id)
            .order_by(Coupon.created_at.desc(), Coupon.id.desc())
            .limit(1)
        )
    ).scalar_one_or_none()


async def deciding_audit(
    session: StoreSession, order_id: str, action: str, *, code: str, naming: str
) -> AuditEntry | None:
    """The newest `action` audit row on the order with `code` whose detail names `naming` (a coupon
    code: a decision on this request, not an older one)."""
    return (
        await session.execute(
            select(AuditEntry)
            .where(
                AuditEntry.target == order_id,
                AuditEntry.action == action,
                AuditEntry.code == code,
                AuditEntry.detail.contains(naming),
            )
            .order_by(AuditEntry.id.desc())
            .limit(1)
        )
    ).scalar_one_or_none()


async def newest_coupons(store: Store, *, player_id: str | None = None, limit: int) -> list[Coupon]:
    """The newest `limit` coupons, every status, only `player_id`'s when given."""
    query = select(Coupon).order_by(Coupon.created_at.desc(), Coupon.id.desc()).limit(limit)
    if player_id is not None:
        query = query.where(Coupon.player_id == player_id)
    async with store.session() as session:
        return list((await session.execute(query)).scalars())


async def incident_coupons(store: Store, player_id: str, incident_id: int) -> list[Coupon]:
    """The player's coupons of an incident's bulk compensation (keys `incident:<id>:…`)."""
    async with store.session() as s:
        query = select(Coupon).where(
            Coupon.player_id == player_id, Coupon.idempotency_key.like(f"incident:{incident_id}:%")
        )
        return list((await s.execute(query)).scalars())


async def live_coupon_of_order(store: Store, order_id: str) -> Coupon | None:
    """The order's live coupon, read in a session of its own."""
    async with store.session() as session:
        return await live_coupon(session, order_id)
