"""The sentence that replaces an unbacked coupon claim: what really happened to coupons in this run,
built from the run's result codes and the facts the ledger put in them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.store import ORDER_STATUSES
from bot.vocabulary.catalogue import NOT_LINKED_REASON, Text
from tools.money import format_krw
from tools.results import ResultCode

ISSUED_PART = Text(
    "주문 {order}의 {amount} 쿠폰(코드 {code}, 유효기간 {expires}까지)",
    "a {amount} coupon for order {order} (code {code}, valid until {expires})",
)
ACTUALLY_ISSUED = Text("실제로 발급된 쿠폰은 {coupons}입니다.", "The coupon actually issued is {coupons}.")
NONE_ISSUED = Text("쿠폰은 발급되지 않았습니다.", "No coupon was issued.")
NOT_YET_ISSUED = Text(
    "쿠폰은 아직 발급되지 않았습니다: 운영진 승인을 기다리고 있습니다.",
    "The coupon has not been issued yet: it is waiting for staff approval.",
)
NONE_ISSUED_BECAUSE = Text("쿠폰은 발급되지 않았습니다: {reason}.", "No coupon was issued: {reason}.")

OVER_LIMIT = Text("1회 한도({limit})를 넘었습니다", "the amount is over the per-coupon limit of {limit}")
AMOUNT_INVALID_RANGE = Text(
    "요청 금액이 유효하지 않습니다({lo} 이상, {step} 단위)",
    "the amount was not valid (at least {lo}, in steps of {step})",
)
AMOUNT_INVALID = Text("요청 금액이 유효하지 않습니다", "the amount was not valid")
STATUS_NOT_ELIGIBLE = Text(
    "주문 상태({label})가 보상 대상이 아닙니다",
    "the order's status ({status}) is not eligible for compensation",
)
ALREADY_HAS = Text(
    "주문 {order}에는 이미 {amount} 쿠폰이 있습니다", "order {order} already has a {amount} coupon"
)
ALREADY_HAS_ONE = Text("이 주문에는 이미 쿠폰이 있습니다", "the order already has a coupon")
REASONS = {
    ResultCode.DAILY_LIMIT_REACHED: Text(
        "오늘의 발급 한도에 도달했습니다", "the daily limit has been reached"
    ),
    ResultCode.PENDING_APPROVAL: Text("운영진 승인을 기다리고 있습니다", "it is waiting for staff approval"),
    ResultCode.ORDER_NOT_FOUND: Text("주문을 찾을 수 없습니다", "the order was not found"),
    ResultCode.NOT_LINKED: NOT_LINKED_REASON,
    ResultCode.DENIED: Text("이 기능을 쓸 권한이 없습니다", "this action is not allowed"),
    ResultCode.SOURCE_UNAVAILABLE: Text(
        "지금은 주문 정보를 확인할 수 없습니다", "the order information cannot be checked right now"
    ),
}
SOME_ERROR = Text("처리 중 오류가 발생했습니다", "an error occurred")


def refusal_reason(code: str, data: Mapping[str, Any], locale: str) -> str:
    """Why a coupon attempt with result `code` did not issue, as a clause."""
    coupon = data.get("coupon") or {}
    if code == ResultCode.AMOUNT_OVER_LIMIT and data.get("limit"):
        return OVER_LIMIT(locale, limit=format_krw(int(data["limit"]), locale))
    if code == ResultCode.INVALID_AMOUNT:
        if data.get("min_amount") and data.get("amount_step"):
            lo, step = (
                format_krw(int(data["min_amount"]), locale),
                format_krw(int(data["amount_step"]), locale),
            )
            return AMOUNT_INVALID_RANGE(locale, lo=lo, step=step)
        return AMOUNT_INVALID(locale)
    if code == ResultCode.NOT_ELIGIBLE_STATUS:
        status = str(data.get("status") or "")
        return STATUS_NOT_ELIGIBLE(locale, label=ORDER_STATUSES.get(status, status), status=status)
    if code == ResultCode.ALREADY_ISSUED:
        if coupon.get("amount"):
            amount = format_krw(int(coupon["amount"]), locale)
            return ALREADY_HAS(locale, order=coupon.get("order_id"), amount=amount)
        return ALREADY_HAS_ONE(locale)
    return REASONS.get(code, SOME_ERROR)(locale)


def issued_part(data: Mapping[str, Any], locale: str) -> str:
    """One issued coupon: order, amount, code and expiry."""
    coupon = data.get("coupon") or {}
    return ISSUED_PART(
        locale,
        order=coupon.get("order_id") or data.get("order_id"),
        amount=format_krw(int(coupon.get("amount") or data.get("amount") or 0), locale),
        code=coupon.get("code"),
        expires=coupon.get("expires_on") or str(coupon.get("expires_at") or "")[:10],
    )
