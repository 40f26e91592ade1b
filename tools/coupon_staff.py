"""What staff do to coupons after they exist: `/coupon revoke`, `/coupon approve`, `/coupon list` and
the order's live coupon. Every change is staff-only, serialised per order and audited."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.store import AuditEntry, Coupon, DeliveryView, Store, utcnow
from bot.store.coupon_lookups import (
    deciding_audit,
    latest_coupon_of_order,
    live_coupon,
    live_coupon_of_order,
    newest_coupons,
    order_in,
)
from bot.store.coupons import LIVE_STATUSES
from bot.vocabulary.catalogue import STAFF_ONLY_COMMAND, Text
from tools import coupon_messages as say
from tools.base import Actor
from tools.coupon_queries import coupon_view
from tools.money import format_krw
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
        order = await order_in(session, oid)
        coupon = await live_coupon(session, oid) if order is not None else None
        if order is None:
            result = ToolResult(False, ResultCode.ORDER_NOT_FOUND, order_not_found_message(oid, locale), {})
        elif coupon is None or coupon.status not in wanted:
            result = await _decided_before(session, where, oid, coupon, action) or ToolResult(
                False,
                ResultCode.ERROR,
                nothing(locale, order=oid),
                {"coupon": coupon_view(coupon, timezone) if coupon else None},
            )
        else:
            before = coupon.status
            apply(coupon, now)
            await _queue_game_delivery(store, session, before, coupon, now)
            if before == "pending" and coupon.status == "rejected":
                # Never issued: no code, no expiry, and not "revoked".
                message = say.REJECTED(locale, order=oid, amount=format_krw(coupon.amount, locale))
            else:
                message = done(locale, order=oid, coupon=say.describe_coupon(coupon, locale, timezone))
            result = ToolResult(
                True,
                ResultCode.OK,
                message,
                {"coupon": coupon_view(coupon, timezone), "previous_status": before},
            )
        await store.audit(
            actor=actor.label,
            action=action,
            thread_id=thread_id,
            target=oid,
            code=str(result.code),
            detail={
                "reason": reason,
                "message": result.message,
                "coupon": result.data.get("coupon"),
                "by": actor.display_name,  # who decided, by name, for whoever loses a race to it
            },
            session=session,
        )
        await session.commit()
    return result


async def _queue_game_delivery(
    store: Store, session: Any, before: str, coupon: Coupon, now: datetime
) -> None:
    """The outbox job of a change, in the change's own transaction: an approved coupon is granted into
    the game (`ARCA_COUPON_DELIVERY=game`), a revoked one that was granted is taken back."""
    if before == "pending" and coupon.status == "active":
        await store.game_deliveries.add_grant(session, coupon, now)
    elif before == "active" and coupon.status == "revoked":
        await store.game_deliveries.add_revoke(session, coupon.code, now)


async def _decided_before(
    session: Any, where: _Where, oid: str, live: Coupon | None, action: str
) -> ToolResult | None:
    """An approval or rejection that lost a race (or came late): who decided the request, and when.
    None when nobody did (there was no request to decide)."""
    if action not in ("coupon.approve", "coupon.revoke") or (live is not None and live.status != "active"):
        return None
    latest = live or await latest_coupon_of_order(session, oid)
    if latest is None or latest.status not in ("active", "rejected"):
        return None
    decided_by = "coupon.approve" if latest.status == "active" else "coupon.revoke"
    # the detail names the coupon: a decision on this request, not an older one
    row = await deciding_audit(session, oid, decided_by, code=ResultCode.OK, naming=latest.code)
    if row is None:
        return None  # active from the start (issued without approval): nothing was pending
    name = _decider_name(row)
    at = row.at.astimezone(ZoneInfo(where.timezone)).strftime("%Y-%m-%d %H:%M")
    locale = where.locale
    coupon = say.describe_coupon(latest, locale, where.timezone)
    if latest.status == "active":
        text = say.ALREADY_APPROVED if action == "coupon.approve" else say.ALREADY_APPROVED_NOT_REJECTED
        message = text(locale, order=oid, name=name, at=at, coupon=coupon)
        code = ResultCode.ALREADY_ISSUED
    else:
        message, code = say.ALREADY_REJECTED(locale, order=oid, name=name, at=at), ResultCode.ERROR
    view = coupon_view(latest, where.timezone)
    return ToolResult(False, code, message, {"coupon": view, "decided_by": name, "decided_at": at})


def _decider_name(row: AuditEntry) -> str:
    try:
        detail = json.loads(row.detail or "{}")
    except ValueError:
        detail = {}
    return str(detail.get("by") or row.actor) if isinstance(detail, dict) else row.actor


def approval_reason(why: Mapping[str, Any], amount: int, locale: str) -> str:
    """Why a coupon waits for approval, with the rule and the figures (from the issuance's audit detail:
    `{"review": "untrusted_request"}` or `{"threshold": 30000}`); "" when the detail does not say."""
    if why.get("review"):
        return say.APPROVAL_UNTRUSTED(locale)
    threshold = why.get("threshold")
    if isinstance(threshold, int):
        return say.APPROVAL_OVER_THRESHOLD(
            locale, threshold=format_krw(threshold, locale), amount=format_krw(amount, locale)
        )
    return ""


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
    coupons = await newest_coupons(store, player_id=player_id.strip() if player_id else None, limit=limit)
    if not coupons:
        return ToolResult(True, ResultCode.OK, say.no_coupons(locale, player_id), {"coupons": []})
    deliveries = await _deliveries_of(store, coupons)
    lines = [say.LIST_HEAD(locale, count=len(coupons))]
    views = []
    for c in coupons:
        jobs = deliveries.get(c.code, [])
        lines.append(say.coupon_line(c, locale, timezone) + "".join(delivery_note(j, locale) for j in jobs))
        view = coupon_view(c, timezone)
        if jobs:
            view["deliveries"] = [job.as_json() for job in jobs]
        views.append(view)
    return ToolResult(True, ResultCode.OK, "\n".join(lines), {"coupons": views})


async def _deliveries_of(store: Store, coupons: list[Coupon]) -> dict[str, list[DeliveryView]]:
    """The game deliveries (grant, then revoke) of each listed coupon that has any."""
    found: dict[str, list[DeliveryView]] = {}
    for job in reversed(
        await store.game_deliveries.list(codes=[c.code for c in coupons], limit=4 * len(coupons))
    ):
        found.setdefault(job.coupon_code, []).append(job)
    return found


_DELIVERY_STATES = {
    "pending": ("게임 지급 대기", "waiting to reach the game"),
    "delivered": ("게임 지급 완료", "in the game"),
    "dead": ("게임 지급 실패", "refused by the game"),
}
_REVOKE_STATES = {
    "pending": ("게임 회수 대기", "revoke waiting"),
    "delivered": ("게임 회수 완료", "revoked in the game"),
    "dead": ("게임 회수 실패", "revoke refused by the game"),
}


def delivery_note(job: DeliveryView, locale: str) -> str:
    """` · 게임 지급 대기 (시도 2회: 503 …)`: where a coupon's grant (or revoke) into the game stands."""
    ko, en = (_REVOKE_STATES if job.kind == "revoke" else _DELIVERY_STATES)[job.state]
    label = en if locale == "en" else ko
    if job.state == "delivered" or not job.attempts:
        return f" · {label}"
    tries = f"{job.attempts} attempts" if locale == "en" else f"시도 {job.attempts}회"
    why = f": {job.last_error}" if job.last_error else ""
    return f" · {label} ({tries}{why})"


async def active_coupon_for(
    store: Store, order_id: str, *, locale: str = "ko", timezone: str = "Asia/Seoul"
) -> ToolResult:
    """The order's live coupon (active or pending) as `data["coupon"]` (None when there is none). Not audited."""
    oid = normalize_order_id(order_id)
    coupon = await live_coupon_of_order(store, oid)
    if coupon is None:
        return ToolResult(True, ResultCode.OK, say.NO_ACTIVE_COUPON(locale, order=oid), {"coupon": None})
    described = say.describe_coupon(coupon, locale, timezone)
    return ToolResult(
        True,
        ResultCode.OK,
        say.ORDER_COUPON(locale, order=oid, coupon=described),
        {"coupon": coupon_view(coupon, timezone)},
    )
