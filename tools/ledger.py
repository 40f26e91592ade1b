"""The coupon ledger: every way a coupon is born, exactly once, behind the checks of DESIGN.md §5.

The `issue_coupon` tool and the staff `/coupon issue` command both go through here, so the checks, the
exactly-once write and the audit trail exist once. The ledger, not the model, is the truth.
Rules live in `tools.coupon_rules`, one attempt and its results in `tools.coupon_requests`, sentences in `tools.coupon_messages`, the SQL in
`tools.coupon_queries`, and staff changes after issuance in `tools.coupon_staff` (re-exported here).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store import Coupon
from bot.store.coupon_codes import new_coupon_code
from bot.vocabulary.catalogue import ACCOUNT_NOT_LINKED
from tools import coupon_messages as say
from tools.base import Actor, StaffNotifier
from tools.coupon_queries import (
    begin_write,
    coupon_by_key,
    issue_facts,
    live_coupon,
)
from tools.coupon_requests import (
    IssueRequest,
    already_result,
    daily_caps_result,
    issued_result,
    pending_result,
    replayed_result,
)
from tools.coupon_rules import (
    DEFAULT_RULES_PATH,
    CouponRules,
    CouponRulesError,
    check_amount,
    load_coupon_rules,
)
from tools.coupon_staff import active_coupon_for, approve, list_coupons, revoke, staff_denied
from tools.order_views import order_not_found_message
from tools.results import ResultCode, ToolResult

log = logging.getLogger(__name__)

__all__ = [  # names other modules import from here
    "DEFAULT_RULES_PATH",
    "CouponRules",
    "CouponRulesError",
    "active_coupon_for",
    "approve",
    "check_amount",
    "issue_for_player",
    "list_coupons",
    "load_coupon_rules",
    "revoke",
    "staff_issue",
]


class _RaceLost(Exception):
    """The insert hit a unique constraint: another issuance (or the same key) got there first."""


async def _audit(
    store: Any, req: IssueRequest, result: ToolResult, session: AsyncSession | None, **extra: Any
) -> None:
    detail = {
        "order_id": req.order_id,
        "amount": req.amount,
        "reason": req.reason,
        "idempotency_key": req.idempotency_key,
        "message": result.message,
        **extra,
    }
    coupon = result.data.get("coupon")
    if coupon:
        detail["coupon_code"] = coupon["code"]
    await store.audit(
        actor=req.actor.label,
        action="coupon.staff_issue" if req.staff else "coupon.issue",
        thread_id=req.thread_id,
        target=req.order_id,
        code=str(result.code),
        detail=detail,
        session=session,
    )


async def _decide(session: AsyncSession, rules: CouponRules, req: IssueRequest) -> tuple[ToolResult, dict]:
    """All checks and the insert, inside the caller's write transaction. Returns the result + audit extras.

    One SELECT reads every fact the rules need (`issue_facts`); the checks run in DESIGN.md §5's order
    on it; then the coupon insert (its unique indexes decide a race) and, by the caller, the audit row.
    """
    facts = await issue_facts(session, req.order_id, req.idempotency_key, req.now, req.timezone)
    if facts.key_coupon_id is not None:
        existing_by_key = await session.get(Coupon, facts.key_coupon_id)
        if existing_by_key is not None:
            return replayed_result(req, existing_by_key), {"replayed": True}

    owner = facts.order_player_id
    if owner is None or (not req.staff and owner != req.actor.player_id):
        # Same answer for "missing" and "someone else's": the audit keeps the true reason.
        missing = req.result(
            False, ResultCode.ORDER_NOT_FOUND, order_not_found_message(req.order_id, req.locale)
        )
        return missing, {"why": "missing" if owner is None else "other_player"}

    status = facts.order_status or ""
    if not req.staff and status not in rules.eligible_statuses:
        msg = say.not_eligible(req.order_id, status, rules.eligible_statuses, req.locale)
        res = req.result(
            False, ResultCode.NOT_ELIGIBLE_STATUS, msg, status=status, eligible=rules.eligible_statuses
        )
        return res, {}

    bad = check_amount(rules, req.amount, locale=req.locale, staff=req.staff)
    if bad is not None:
        code, msg, data = bad
        return req.result(False, code, msg, **data), {}

    if facts.live_coupon_id is not None:
        existing = await session.get(Coupon, facts.live_coupon_id)
        if existing is not None:
            return already_result(req, existing), {}

    if not req.staff:
        over = daily_caps_result(rules, req, facts.day)
        if over is not None:
            return over, {}

    pending = not req.staff and rules.approval_threshold is not None and req.amount > rules.approval_threshold
    coupon = Coupon(
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
    )
    session.add(coupon)
    try:
        await session.flush()
    except IntegrityError as exc:
        raise _RaceLost() from exc
    if pending:
        return pending_result(req, coupon), {"threshold": rules.approval_threshold}
    return issued_result(req, coupon), {}


class _SyncSession:
    """The few `AsyncSession` calls `_decide` and the audit make, over a synchronous ORM session.

    Used on the loop-thread SQLite connection (`Store.direct`): every await completes at once, so the
    whole read-check-insert runs as one unit inside `BEGIN IMMEDIATE` without a driver-thread hop.
    """

    def __init__(self, session: Any) -> None:
        self._s = session

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        return self._s.execute(*args, **kwargs)

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        return self._s.get(*args, **kwargs)

    def add(self, obj: Any) -> None:
        self._s.add(obj)

    async def flush(self) -> None:
        self._s.flush()


async def _decide_and_audit(
    store: Any, rules: CouponRules, req: IssueRequest
) -> tuple[ToolResult, dict[str, Any]]:
    """One issuance transaction: the write lock, every check, the insert and its audit row."""
    direct = getattr(store, "direct", None)
    if direct is not None:

        async def unit(_conn: Any) -> tuple[ToolResult, dict[str, Any]]:
            with direct.orm() as sync:
                session = _SyncSession(sync)
                result, extra = await _decide(session, rules, req)  # type: ignore[arg-type]
                await _audit(store, req, result, session, **extra)  # type: ignore[arg-type]
                sync.commit()
            return result, extra

        return await direct.write_async(unit)
    async with store.session() as session:
        await begin_write(session, req.actor.player_id)
        result, extra = await _decide(session, rules, req)
        await _audit(store, req, result, session, **extra)
        await session.commit()
    return result, extra


async def _issue(
    store: Any, rules: CouponRules, req: IssueRequest, notify: StaffNotifier | None
) -> ToolResult:
    for _attempt in range(3):
        try:
            result, _extra = await _decide_and_audit(store, rules, req)
        except (_RaceLost, IntegrityError):
            result = await _after_race(store, req)
            if result is None:
                continue  # a coupon-code collision, nothing else holds the slot: draw a new code
            return result
        if result.code == ResultCode.PENDING_APPROVAL and not result.data.get("replayed"):
            await _notify(notify, "approval", _approval_payload(req, result))
        return result
    return req.result(False, ResultCode.ERROR, say.ISSUE_FAILED(req.locale))


async def _after_race(store: Any, req: IssueRequest) -> ToolResult | None:
    """After a unique-constraint failure: replay our own key, or report the coupon that won."""
    async with store.session() as session:
        await begin_write(session, req.actor.player_id)
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


def _approval_payload(req: IssueRequest, result: ToolResult) -> dict[str, Any]:
    coupon = result.data.get("coupon") or {}
    return {
        "order_id": req.order_id,
        "player_id": coupon.get("player_id"),
        "amount": req.amount,
        "reason": req.reason,
        "thread_id": req.thread_id,
        "requested_by": req.actor.label,
        "coupon_code": coupon.get("code"),
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
    store: Any,
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
) -> ToolResult:
    """The guarded issuance behind `issue_coupon`: every check of DESIGN.md §5, in order, exactly once."""
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
    return await _issue(store, rules, req, notify)


async def staff_issue(
    store: Any,
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
    return await _issue(store, rules, req, None)
