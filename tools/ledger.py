"""The coupon ledger: every way a coupon is born, exactly once, behind the checks of DESIGN.md §5.

The `issue_coupon` tool and the staff `/coupon issue` command both go through here, so the checks, the
exactly-once write and the audit trail exist once. The ledger, not the model, is the truth.
Rules live in `tools.coupon_rules`, one attempt and its results in `tools.coupon_requests`, sentences in `tools.coupon_messages`, the SQL in
`tools.coupon_queries`, and staff changes after issuance in `tools.coupon_staff`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from bot.game.orders import BuiltinOrderSource, OrderSource, SourceUnavailable
from bot.store import CouponRow, IssueFacts, IssueWrite, RaceLost, Store, StoreSession, utcnow
from bot.store.audit_views import audit_in_session
from bot.store.coupon_codes import new_coupon_code
from bot.store.coupon_lookups import coupon_by_key, live_coupon
from bot.vocabulary.catalogue import ACCOUNT_NOT_LINKED
from tools import coupon_messages as say
from tools.base import Actor, StaffNotifier
from tools.coupon_requests import (
    IssueRequest,
    already_result,
    daily_caps_result,
    issued_result,
    pending_result,
    replayed_result,
)
from tools.coupon_rules import (
    CouponRules,
    check_amount,
)
from tools.coupon_staff import staff_denied
from tools.local_time import day_bounds
from tools.order_views import order_not_found_message, orders_unavailable_message
from tools.results import ResultCode, ToolResult

log = logging.getLogger(__name__)


def _audit_detail(
    req: IssueRequest, result: ToolResult, extra: dict[str, Any], order_facts: dict[str, Any] | None = None
) -> str:
    detail = {
        "order_id": req.order_id,
        "amount": req.amount,
        "reason": req.reason,
        "idempotency_key": req.idempotency_key,
        "message": result.message,
        **extra,
    }
    if order_facts is not None:  # what the decision was made on, kept even when the order is gone
        detail["order_facts"] = order_facts
    coupon = result.data.get("coupon")
    if coupon:
        detail["coupon_code"] = coupon["code"]
    return json.dumps(detail, ensure_ascii=False, default=str)


def _audit_row(
    req: IssueRequest, result: ToolResult, extra: dict[str, Any], order_facts: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The audit row of one attempt, written in the attempt's own transaction."""
    return {
        "at": utcnow(),
        "actor": req.actor.label,
        "thread_id": req.thread_id,
        "action": "coupon.staff_issue" if req.staff else "coupon.issue",
        "target": req.order_id,
        "code": str(result.code),
        "detail": _audit_detail(req, result, extra, order_facts),
    }


async def _audit(
    store: Store, req: IssueRequest, result: ToolResult, session: StoreSession | None, **extra: Any
) -> None:
    row = _audit_row(req, result, extra)
    if session is not None:
        await audit_in_session(session, row)
        return
    await store.audit(**{k: v for k, v in row.items() if k != "at"})


@dataclass(frozen=True)
class _Decision:
    result: ToolResult
    extra: dict[str, Any]
    coupon: CouponRow | None = None
    """The coupon to insert (ISSUED or PENDING_APPROVAL), else None."""
    order_facts: dict[str, Any] | None = None
    """The order facts the decision was made on (None when there was no order to decide on)."""


def _order_truth(
    req: IssueRequest, facts: IssueFacts
) -> tuple[str | None, str | None, dict[str, Any] | None]:
    """Owner, status and the facts to keep: from the fresh read of the studio's backend (http source;
    the embedded row is only its mirror), else from the embedded table read in this transaction."""
    if req.external:
        if req.order is None:
            return None, None, None
        return req.order.player_id, req.order.status, req.order.facts()
    if facts.order_player_id is None:
        return None, None, None
    kept = {
        "id": req.order_id,
        "player_id": facts.order_player_id,
        "status": facts.order_status,
        "amount": facts.order_amount,
        "currency": facts.order_currency or "KRW",
        "updated_at": None if facts.order_updated_at is None else facts.order_updated_at.isoformat(),
        "source": "builtin",
        "read_at": req.now.isoformat(),
    }
    return facts.order_player_id, facts.order_status, kept


def _decide(rules: CouponRules, req: IssueRequest, facts: IssueFacts) -> _Decision:
    """Every check of DESIGN.md §5, in order, on the facts read inside the write transaction.

    Pure: the caller inserts the decided coupon (its unique indexes decide a race) and the audit row.
    """
    if facts.key_coupon is not None:
        return _Decision(replayed_result(req, facts.key_coupon), {"replayed": True})

    owner, status_read, kept = _order_truth(req, facts)
    if owner is None or (not req.staff and owner != req.actor.player_id):
        # Same answer for "missing" and "someone else's": the audit keeps the true reason.
        missing = req.result(
            False, ResultCode.ORDER_NOT_FOUND, order_not_found_message(req.order_id, req.locale)
        )
        return _Decision(missing, {"why": "missing" if owner is None else "other_player"}, None, kept)

    status = status_read or ""
    if not req.staff and status not in rules.eligible_statuses:
        msg = say.not_eligible(req.order_id, status, rules.eligible_statuses, req.locale)
        res = req.result(
            False, ResultCode.NOT_ELIGIBLE_STATUS, msg, status=status, eligible=rules.eligible_statuses
        )
        return _Decision(res, {}, None, kept)

    bad = check_amount(rules, req.amount, locale=req.locale, staff=req.staff)
    if bad is not None:
        code, msg, data = bad
        return _Decision(req.result(False, code, msg, **data), {}, None, kept)

    if facts.live_coupon is not None:
        return _Decision(already_result(req, facts.live_coupon), {}, None, kept)

    if not req.staff:
        over = daily_caps_result(rules, req, facts.day)
        if over is not None:
            return _Decision(over, {}, None, kept)

    over_threshold = rules.approval_threshold is not None and req.amount > rules.approval_threshold
    pending = not req.staff and (req.review or over_threshold)
    coupon = CouponRow(
        id=None,
        code=new_coupon_code(),
        order_id=req.order_id,
        player_id=owner,
        amount=req.amount,
        status="pending" if pending else "active",
        reason=req.reason,
        issued_by=req.actor.label[:64],
        idempotency_key=req.idempotency_key,
        created_at=req.now,
        expires_at=req.now + timedelta(days=rules.valid_days),
        revoked_at=None,
    )
    if pending:
        why = {"review": "untrusted_request"} if req.review else {"threshold": rules.approval_threshold}
        return _Decision(pending_result(req, coupon), why, coupon, kept)
    return _Decision(issued_result(req, coupon), {}, coupon, kept)


async def _decide_and_audit(
    store: Store, rules: CouponRules, req: IssueRequest
) -> tuple[ToolResult, dict[str, Any]]:
    """One issuance transaction (`Store.coupons.issue`): the player's lock, the facts, the checks, the
    coupon and its audit row."""

    def decide(facts: IssueFacts) -> IssueWrite[_Decision]:
        decision = _decide(rules, req, facts)
        audit = _audit_row(req, decision.result, decision.extra, decision.order_facts)
        return IssueWrite(decision.coupon, audit, decision, decision.order_facts)

    decision = await store.coupons.issue(
        player_id=req.actor.player_id,
        order_id=req.order_id,
        key=req.idempotency_key,
        day=day_bounds(req.now, req.timezone),
        decide=decide,
    )
    return decision.result, decision.extra


async def _read_fresh(store: Store, orders: OrderSource, req: IssueRequest) -> IssueRequest | ToolResult:
    """With the studio's backend as the order source, read the order fresh (never from the cache): the
    decision is made on that read, or on nothing — SOURCE_UNAVAILABLE, audited, no coupon. The builtin
    table needs no read here: the issuance's own transaction reads it."""
    if orders.name == "builtin":
        return req
    try:
        order = await orders.order(req.order_id, fresh=True)
    except SourceUnavailable as exc:
        msg = say.NOT_ISSUED_UNAVAILABLE(req.locale, unavailable=orders_unavailable_message(req.locale))
        result = req.result(False, ResultCode.SOURCE_UNAVAILABLE, msg)
        await _audit(store, req, result, None, why=exc.reason)
        return result
    return replace(req, order=order, external=True)


async def _issue(
    store: Store,
    rules: CouponRules,
    req: IssueRequest,
    notify: StaffNotifier | None,
    orders: OrderSource | None = None,
) -> ToolResult:
    read = await _read_fresh(store, orders or BuiltinOrderSource(store), req)
    if isinstance(read, ToolResult):
        return read
    req = read
    for _attempt in range(3):
        try:
            result, extra = await _decide_and_audit(store, rules, req)
        except RaceLost:
            result = await _after_race(store, req)
            if result is None:
                continue  # a coupon-code collision, nothing else holds the slot: draw a new code
            return result
        if result.code == ResultCode.PENDING_APPROVAL and not result.data.get("replayed"):
            await _notify(notify, "approval", _approval_payload(req, result, extra))
        return result
    return req.result(False, ResultCode.ERROR, say.ISSUE_FAILED(req.locale))


async def _after_race(store: Store, req: IssueRequest) -> ToolResult | None:
    """After a unique-constraint failure: replay our own key, or report the coupon that won."""
    async with store.coupons.locked_session(player_id=req.actor.player_id) as session:
        mine = await coupon_by_key(session, req.idempotency_key)
        if mine is not None:
            result, extra = replayed_result(req, mine), {"replayed": True, "race": True}
        else:
            winner = await live_coupon(session, req.order_id)
            if winner is None:
                return None
            result, extra = already_result(req, winner), {"race": True}
        await _audit(store, req, result, session, **extra)
        await session.commit()
    return result


def _approval_payload(req: IssueRequest, result: ToolResult, why: dict[str, Any]) -> dict[str, Any]:
    coupon = result.data.get("coupon") or {}
    return {
        "order_id": req.order_id,
        "player_id": coupon.get("player_id"),
        "amount": req.amount,
        "reason": req.reason,
        "thread_id": req.thread_id,
        "requested_by": req.actor.label,
        "coupon_code": coupon.get("code"),
        "flagged": req.review,
        "why": dict(why),  # the rule that made it wait: {"review": …} or {"threshold": N}
    }


async def _notify(notify: StaffNotifier | None, kind: str, payload: dict[str, Any]) -> bool:
    """Tell staff; a failing notifier never undoes what was recorded."""
    if notify is None:
        return False
    try:
        await notify(kind, payload)
    except Exception:  # the staff channel being down must not lose the ledger entry or crash the tool
        log.exception("staff notification (%s) failed", kind)
        return False
    return True


# ---- public API --------------------------------------------------------------------------------


async def issue_for_player(
    store: Store,
    rules: CouponRules,
    *,
    actor: Actor,
    order_id: str,
    amount: int,
    reason: str | None = None,
    idempotency_key: str | None = None,
    thread_id: str | None = None,
    locale: str = "ko",
    now: datetime | None = None,
    timezone: str = "Asia/Seoul",
    notify: StaffNotifier | None = None,
    review: bool = False,
    orders: OrderSource | None = None,
) -> ToolResult:
    """The guarded issuance behind `issue_coupon`: every check of DESIGN.md §5, in order, exactly once.
    `review`: the request came from a message the input guard marked untrusted, so a coupon that passes
    every check waits for staff approval instead of being issued."""
    req = IssueRequest.build(
        actor,
        order_id,
        amount,
        reason=reason,
        idempotency_key=idempotency_key,
        thread_id=thread_id,
        locale=locale,
        now=now,
        timezone=timezone,
        staff=False,
        review=review,
    )
    if not actor.player_id:
        hint = say.STAFF_USE_COUPON_COMMAND(locale) if actor.is_staff else ""
        msg = ACCOUNT_NOT_LINKED(
            locale,
            blocked=say.NO_COUPON_WHEN_UNLINKED(locale),
            more=say.UNLINKED_NEXT_STEP(locale, hint=hint),
        )
        result = req.result(False, ResultCode.NOT_LINKED, msg)
        await _audit(store, req, result, None)
        return result
    return await _issue(store, rules, req, notify, orders)


async def staff_issue(
    store: Store,
    rules: CouponRules,
    *,
    actor: Actor,
    order_id: str,
    amount: int,
    reason: str | None,
    idempotency_key: str | None,
    thread_id: str | None = None,
    locale: str = "ko",
    now: datetime | None = None,
    timezone: str = "Asia/Seoul",
    orders: OrderSource | None = None,
) -> ToolResult:
    """`/coupon issue`: skips link, ownership, status and daily caps; keeps amount ≤ staff_max and one per order."""
    req = IssueRequest.build(
        actor,
        order_id,
        amount,
        reason=reason,
        idempotency_key=idempotency_key,
        thread_id=thread_id,
        locale=locale,
        now=now,
        timezone=timezone,
        staff=True,
    )
    if not actor.is_staff:
        result = staff_denied(actor, locale)
        await _audit(store, req, result, None)
        return result
    return await _issue(store, rules, req, None, orders)
