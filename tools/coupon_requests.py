"""One coupon issuance attempt (`IssueRequest`, bot or staff) and the results it can end in: issued,
pending approval, already issued, a daily cap reached, or the same call answered again."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.store import Coupon, DailyUsage, OrderRecord, utcnow
from tools import coupon_messages as say
from tools.base import Actor
from tools.coupon_queries import coupon_view
from tools.coupon_rules import CouponRules
from tools.money import format_krw
from tools.order_views import normalize_order_id
from tools.results import ResultCode, ToolResult


@dataclass(frozen=True)
class IssueRequest:
    """One issuance attempt, bot or staff."""

    actor: Actor
    order_id: str
    amount: int
    reason: str | None
    idempotency_key: str | None
    thread_id: str | None
    locale: str
    now: datetime
    timezone: str
    staff: bool
    review: bool = False
    """The player's message tried to instruct the bot or claimed authority: staff approve any coupon."""
    order: OrderRecord | None = None
    """The order as the studio's backend answered a fresh read (http source); None with the builtin
    source, whose table is read inside the issuance's own transaction."""
    external: bool = False
    """The order source is the studio's backend: `order` (a fresh read), not the embedded mirror, decides."""

    @classmethod
    def build(
        cls,
        actor: Actor,
        order_id: str,
        amount: int,
        *,
        reason: str | None,
        idempotency_key: str | None,
        thread_id: str | None,
        locale: str,
        now: datetime | None,
        timezone: str,
        staff: bool,
        review: bool = False,
    ) -> IssueRequest:
        return cls(
            actor=actor,
            order_id=normalize_order_id(order_id),
            amount=amount,
            reason=reason,
            idempotency_key=idempotency_key,
            thread_id=thread_id,
            locale=locale,
            now=now or utcnow(),
            timezone=timezone,
            staff=staff,
            review=review,
        )

    def result(self, ok: bool, code: ResultCode, message: str, **data: Any) -> ToolResult:
        return ToolResult(
            ok=ok,
            code=code,
            message=message,
            data={"tool": "issue_coupon", "order_id": self.order_id, "amount": self.amount, **data},
        )


def replayed_result(req: IssueRequest, coupon: Coupon) -> ToolResult:
    """The same call came again (same idempotency key): answer what the first call answered."""
    if coupon.status == "pending":
        return pending_result(req, coupon, replayed=True)
    return issued_result(req, coupon, replayed=True)


def issued_result(req: IssueRequest, coupon: Coupon, *, replayed: bool = False) -> ToolResult:
    view = coupon_view(coupon, req.timezone)
    msg = say.issued(coupon, req.locale, req.timezone)
    return req.result(True, ResultCode.ISSUED, msg, amount=coupon.amount, coupon=view, replayed=replayed)


def pending_result(req: IssueRequest, coupon: Coupon, *, replayed: bool = False) -> ToolResult:
    msg = say.PENDING(req.locale, order=coupon.order_id, amount=format_krw(coupon.amount, req.locale))
    view = coupon_view(coupon, req.timezone)
    return req.result(
        False, ResultCode.PENDING_APPROVAL, msg, amount=coupon.amount, coupon=view, replayed=replayed
    )


def already_result(req: IssueRequest, existing: Coupon) -> ToolResult:
    described = say.describe_coupon(existing, req.locale, req.timezone)
    msg = say.ALREADY(req.locale, order=req.order_id, coupon=described)
    return req.result(False, ResultCode.ALREADY_ISSUED, msg, coupon=coupon_view(existing, req.timezone))


def daily_caps_result(rules: CouponRules, req: IssueRequest, used: DailyUsage) -> ToolResult | None:
    """DAILY_LIMIT_REACHED when this coupon would break the player's count or amount cap for today."""
    caps = {"daily_max_count": rules.daily_max_count, "daily_max_amount": rules.daily_max_amount}

    def krw(value: int) -> str:
        return format_krw(value, req.locale)

    if used.count >= rules.daily_max_count:
        msg = say.DAILY_COUNT_REACHED(req.locale, tz=req.timezone, used=used.count, cap=rules.daily_max_count)
        return req.result(False, ResultCode.DAILY_LIMIT_REACHED, msg, used=used.count, **caps)
    if used.amount + req.amount <= rules.daily_max_amount:
        return None
    left = max(rules.daily_max_amount - used.amount, 0)
    left = left - left % rules.amount_step
    retry = say.DAILY_RETRY_WITH(req.locale, left=krw(left)) if left >= rules.min_amount else ""
    msg = say.DAILY_AMOUNT_EXCEEDED(
        req.locale,
        tz=req.timezone,
        cap=krw(rules.daily_max_amount),
        used=krw(used.amount),
        retry=retry or say.DAILY_NOTHING_LEFT(req.locale),
    )
    return req.result(
        False, ResultCode.DAILY_LIMIT_REACHED, msg, used_amount=used.amount, remaining=left, **caps
    )
