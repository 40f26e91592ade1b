"""What staff do to coupons after they exist: `/coupon revoke`, `/coupon approve`, `/coupon list` and
the order's live coupon. Every change is staff-only, serialised per order and audited."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select

from bot.store import Coupon, Order, Store, utcnow
from bot.store.coupons import LIVE_STATUSES
from bot.vocabulary.catalogue import STAFF_ONLY_COMMAND, Text
from tools import coupon_messages as say
from tools.base import Actor
from tools.coupon_queries import coupon_view, live_coupon
from tools.order_views import normalize_order_id, order_not_found_message
from tools.results import ResultCode, ToolResult


def staff_denied(actor: Actor, locale: str) -> ToolResult:
    return ToolResult(
        ok=False,
        code=ResultCode.DENIED,
        message=STAFF_ONLY_COMMAND(locale),
        data={"reason": "not_staff", "actor": actor.label},
    )


@dataclass(frozen=True)
class _Where:
    """Who changes which order's live coupon, from where, when."""

    actor: Actor
    order_id: str
    reason: str | None
    thread_id: str | None
    locale: str
    now: datetime
    timezone: str


async def _change_live(
    store: Store,
    where: _Where,
    action: str,
    wanted: tuple[str, ...],
    apply: Callable[[Coupon, datetime], None],
    done: Text,
    nothing: Text,
) -> ToolResult:
    actor, reason, thread_id = where.actor, where.reason, where.thread_id
    locale, now, timezone = where.locale, where.now, where.timezone
    oid = normalize_order_id(where.order_id)
    if not actor.is_staff:
        result = staff_denied(actor, locale)
        await store.audit(actor=actor.label, action=action, thread_id=thread_id, target=oid, code=result.code)
        return result
    async with store.coupons.locked_session(order_id=oid) as session:
        order = await session.get(Order, oid)
        coupon = await live_coupon(session, oid) if order is not None else None
        if order is None:
            result = ToolResult(False, ResultCode.ORDER_NOT_FOUND, order_not_found_message(oid, locale), {})
        elif coupon is None or coupon.status not in wanted:
            result = ToolResult(
                False,
                ResultCode.ERROR,
                nothing(locale, order=oid),
                {"coupon": coupon_view(coupon, timezone) if coupon else None},
            )
        else:
            before = coupon.status
            apply(coupon, now)
            described = say.describe_coupon(coupon, locale, timezone)
            result = ToolResult(
                True,
                ResultCode.OK,
                done(locale, order=oid, coupon=described),
                {"coupon": coupon_view(coupon, timezone), "previous_status": before},
            )
        await store.audit(
            actor=actor.label,
            action=action,
            thread_id=thread_id,
            target=oid,
            code=str(result.code),
            detail={"reason": reason, "message": result.message, "coupon": result.data.get("coupon")},
            session=session,
        )
        await session.commit()
    return result


async def revoke(
    store: Store,
    *,
    actor: Actor,
    order_id: str,
    reason: str | None = None,
    thread_id: str | None = None,
    locale: str = "ko",
    now: datetime | None = None,
    timezone: str = "Asia/Seoul",
) -> ToolResult:
    """`/coupon revoke`: the order's live coupon becomes `revoked` (a pending one `rejected`), freeing the slot."""

    def apply(coupon: Coupon, at: datetime) -> None:
        coupon.status = "rejected" if coupon.status == "pending" else "revoked"
        coupon.revoked_at = at

    where = _Where(actor, order_id, reason, thread_id, locale, now or utcnow(), timezone)
    return await _change_live(
        store, where, "coupon.revoke", LIVE_STATUSES, apply, say.REVOKED, say.NOTHING_TO_REVOKE
    )


async def reject(
    store: Store,
    *,
    actor: Actor,
    order_id: str,
    reason: str | None = None,
    thread_id: str | None = None,
    locale: str = "ko",
    now: datetime | None = None,
    timezone: str = "Asia/Seoul",
) -> ToolResult:
    """The Reject button: `/coupon revoke` limited to a *pending* coupon (→ `rejected`), so a
    Reject racing an Approve never revokes the coupon the Approve just activated."""

    def apply(coupon: Coupon, at: datetime) -> None:
        coupon.status = "rejected"
        coupon.revoked_at = at

    where = _Where(actor, order_id, reason, thread_id, locale, now or utcnow(), timezone)
    return await _change_live(
        store, where, "coupon.revoke", ("pending",), apply, say.REVOKED, say.NOTHING_TO_APPROVE
    )


async def approve(
    store: Store,
    *,
    actor: Actor,
    order_id: str,
    thread_id: str | None = None,
    locale: str = "ko",
    now: datetime | None = None,
    timezone: str = "Asia/Seoul",
) -> ToolResult:
    """`/coupon approve`: the order's pending coupon becomes active; its validity starts at approval."""

    def apply(coupon: Coupon, at: datetime) -> None:
        # The pending row carries the validity length (expires_at - created_at); it starts now.
        validity = (coupon.expires_at - coupon.created_at) if coupon.expires_at else timedelta(days=30)
        coupon.status = "active"
        coupon.expires_at = at + validity

    where = _Where(actor, order_id, None, thread_id, locale, now or utcnow(), timezone)
    return await _change_live(
        store, where, "coupon.approve", ("pending",), apply, say.APPROVED, say.NOTHING_TO_APPROVE
    )


async def list_coupons(
    store: Store,
    player_id: str | None = None,
    *,
    locale: str = "ko",
    timezone: str = "Asia/Seoul",
    limit: int = 50,
) -> ToolResult:
    """`/coupon list [player_id]`: newest first, every status. A read: not audited here."""
    async with store.session() as session:
        query = select(Coupon).order_by(Coupon.created_at.desc(), Coupon.id.desc()).limit(limit)
        if player_id:
            query = query.where(Coupon.player_id == player_id.strip())
        coupons = list((await session.execute(query)).scalars())
    if not coupons:
        return ToolResult(True, ResultCode.OK, say.no_coupons(locale, player_id), {"coupons": []})
    lines = [say.LIST_HEAD(locale, count=len(coupons))]
    lines += [say.coupon_line(c, locale, timezone) for c in coupons]
    views = [coupon_view(c, timezone) for c in coupons]
    return ToolResult(True, ResultCode.OK, "\n".join(lines), {"coupons": views})


async def active_coupon_for(
    store: Store, order_id: str, *, locale: str = "ko", timezone: str = "Asia/Seoul"
) -> ToolResult:
    """The order's live coupon (active or pending) as `data["coupon"]` (None when there is none). Not audited."""
    oid = normalize_order_id(order_id)
    async with store.session() as session:
        coupon = await live_coupon(session, oid)
    if coupon is None:
        return ToolResult(True, ResultCode.OK, say.NO_ACTIVE_COUPON(locale, order=oid), {"coupon": None})
    described = say.describe_coupon(coupon, locale, timezone)
    return ToolResult(
        True,
        ResultCode.OK,
        say.ORDER_COUPON(locale, order=oid, coupon=described),
        {"coupon": coupon_view(coupon, timezone)},
    )
