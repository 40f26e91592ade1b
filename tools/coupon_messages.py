"""Every sentence the coupon ledger says, in Korean and English.

The model reads these as tool observations and acts on them, so a refusal names the reason and what
would be valid. Amounts are formatted for the conversation's language before they are filled in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.vocabulary.catalogue import Text, say
from tools.local_time import local_date
from tools.money import format_krw
from tools.order_views import status_label

if TYPE_CHECKING:
    from collections.abc import Sequence

    from bot.store import Coupon

# ---- amounts -------------------------------------------------------------------------------------

AMOUNT_RANGE = Text("{lo} 이상 {limit} 이하, {step} 단위", "between {lo} and {limit} in steps of {step}")
AMOUNT_NOT_WHOLE = Text("금액은 정수여야 합니다({range}).", "The amount must be a whole number ({range}).")
AMOUNT_NOT_POSITIVE = Text(
    "금액은 양수여야 합니다(요청: {amount}). 쿠폰 금액은 {range}입니다.",
    "The amount must be positive (got {amount}). Coupons are {range}.",
)
AMOUNT_BELOW_MIN = Text(
    "최소 발급 금액은 {lo}입니다(요청: {amount}). {range}로 다시 요청하세요.",
    "The smallest coupon is {lo} (got {amount}). Retry with an amount {range}.",
)
AMOUNT_OVER_LIMIT = Text(
    "1회 최대 {limit}까지 발급할 수 있습니다(요청: {amount}). {limit} 이하로 다시 요청하세요.",
    "At most {limit} can be issued at once (got {amount}). Retry with {limit} or less.",
)
AMOUNT_OFF_STEP = Text(
    "쿠폰 금액은 {step} 단위여야 합니다(요청: {amount}).{hint}",
    "Coupon amounts must be a multiple of {step} (got {amount}).{hint}",
)
AMOUNT_STEP_HINT = Text(" 예: {lower}", " e.g. {lower}")

# ---- issuance --------------------------------------------------------------------------------------

NO_COUPON_WHEN_UNLINKED = Text("쿠폰을 발급할 수 없습니다", "no coupon can be issued")
UNLINKED_NEXT_STEP = Text(" 또는 escalate_to_staff로 넘기세요.{hint}", " Or use escalate_to_staff.{hint}")
STAFF_USE_COUPON_COMMAND = Text(
    " 운영진은 /coupon issue 명령을 쓰세요.", " Staff should use the /coupon issue command."
)
NOT_ISSUED_UNAVAILABLE = Text(
    "쿠폰은 발급되지 않았어요. {unavailable}", "No coupon was issued. {unavailable}"
)
"""SOURCE_UNAVAILABLE of an issuance: the order could not be read fresh, so nothing was decided."""
ISSUE_FAILED = Text(
    "쿠폰 발급 중 오류가 발생했습니다. 잠시 후 다시 시도하세요.", "Issuing failed; retry later."
)
ISSUED = Text(
    "주문 {order}에 {amount} 쿠폰을 발급했습니다. 쿠폰 코드: {code}, 유효기간: {expires}까지. 플레이어에게 금액, "
    "쿠폰 코드, 유효기간을 그대로 안내하세요.",
    "Issued a {amount} coupon for order {order}. Coupon code: {code}, valid until {expires}. Give the player "
    "the amount, the code and the expiry date as written.",
)
ISSUED_NOW_IN_STATUS = Text(
    " (참고: 이 쿠폰은 현재 {status} 상태입니다.)", " (Note: this coupon is now {status}.)"
)
PENDING = Text(
    "주문 {order}의 {amount} 쿠폰 요청은 운영진 승인이 필요해 승인 대기 중입니다. 아직 발급된 것이 아니므로 발급되었다고 "
    "말하지 말고, 운영진이 승인하면 사용할 수 있다고 안내하세요.",
    "The {amount} coupon for order {order} needs staff approval and is pending. It is NOT issued yet: do not "
    "say it was issued; tell the player it becomes usable once staff approve it.",
)
ALREADY = Text(
    "주문 {order}에는 이미 {coupon:이/가} 있습니다. 주문당 쿠폰은 하나뿐이니 새로 발급하지 말고 기존 쿠폰을 안내하세요.",
    "Order {order} already has {coupon}. Only one coupon per order: do not issue another, point the player "
    "to the existing one.",
)
DAILY_COUNT_REACHED = Text(
    "이 플레이어는 오늘({tz} 기준) 이미 쿠폰 {used}장을 받아 하루 최대 {cap}장 한도에 도달했습니다. 오늘은 더 "
    "발급할 수 없으니 내일 다시 요청하거나 escalate_to_staff로 운영진에게 넘기세요.",
    "This player already received {used} coupon(s) today ({tz}), the daily maximum of {cap}. No more today: "
    "try again tomorrow or use escalate_to_staff.",
)
DAILY_AMOUNT_EXCEEDED = Text(
    "이 플레이어의 오늘({tz} 기준) 쿠폰 합계가 하루 한도 {cap}를 넘게 됩니다(오늘 발급: {used}).{retry}",
    "This would exceed the player's daily total of {cap} ({tz}; already issued today: {used}).{retry}",
)
DAILY_RETRY_WITH = Text(" {left} 이하로 다시 요청할 수 있습니다.", " You may retry with {left} or less.")
DAILY_NOTHING_LEFT = Text(
    " 오늘은 더 발급할 수 없으니 내일 다시 요청하거나 escalate_to_staff로 운영진에게 넘기세요.",
    " Nothing more can be issued today: try tomorrow or use escalate_to_staff.",
)
NOT_ELIGIBLE = Text(
    "주문 {order}의 현재 상태는 {status}라서 보상 쿠폰 대상이 아닙니다. 쿠폰은 {eligible} 상태의 주문에만 발급할 수 "
    "있습니다.",
    "Order {order} is currently {status}, which is not eligible for a compensation coupon. Coupons can only "
    "be issued for orders that are {eligible}.",
)

# ---- staff changes and listings --------------------------------------------------------------------

REVOKED = Text(
    "주문 {order}의 쿠폰을 취소했습니다: {coupon}.", "Revoked the coupon of order {order}: {coupon}."
)
NOTHING_TO_REVOKE = Text("주문 {order}에는 취소할 쿠폰이 없습니다.", "Order {order} has no coupon to revoke.")
APPROVED = Text(
    "주문 {order}의 쿠폰을 승인했습니다: {coupon}.", "Approved the coupon of order {order}: {coupon}."
)
NOTHING_TO_APPROVE = Text(
    "주문 {order}에는 승인 대기 중인 쿠폰이 없습니다.", "Order {order} has no coupon awaiting approval."
)
REJECTED = Text(
    "주문 {order}의 승인 대기 쿠폰 요청({amount})을 거절했습니다. 쿠폰은 발급되지 않았습니다.",
    "Rejected the pending coupon request for order {order} ({amount}); no coupon was issued.",
)
ALREADY_APPROVED = Text(
    "주문 {order}의 쿠폰은 이미 {name} 님이 {at}에 승인했습니다: {coupon}.",
    "The coupon of order {order} was already approved by {name} at {at}: {coupon}.",
)
ALREADY_APPROVED_NOT_REJECTED = Text(
    "주문 {order}의 쿠폰은 이미 {name} 님이 {at}에 승인해 거절하지 않았습니다: {coupon}. "
    "되돌리려면 /coupon revoke {order}",
    "The coupon of order {order} was already approved by {name} at {at}, so it was not rejected: "
    "{coupon}. To take it back: /coupon revoke {order}",
)
ALREADY_REJECTED = Text(
    "주문 {order}의 쿠폰 요청은 이미 {name} 님이 {at}에 거절했습니다. 쿠폰은 발급되지 않았습니다.",
    "The coupon request of order {order} was already rejected by {name} at {at}; no coupon was issued.",
)
APPROVAL_OVER_THRESHOLD = Text(
    "승인 기준 {threshold} 초과: 요청 {amount}", "Over the approval threshold of {threshold}: asked {amount}"
)
APPROVAL_UNTRUSTED = Text(
    "입력이 신뢰할 수 없음으로 표시됨 (봇에게 지시하거나 권한을 주장한 메시지의 요청)",
    "Input marked untrusted (asked in a message that tried to instruct the bot or claimed authority)",
)
NO_ACTIVE_COUPON = Text("주문 {order}에는 활성 쿠폰이 없습니다.", "Order {order} has no active coupon.")
ORDER_COUPON = Text("주문 {order}: {coupon}", "Order {order}: {coupon}")
LIST_HEAD = Text("쿠폰 {count}개 (최신순):", "{count} coupon(s), newest first:")
EXPIRES_ON = Text("만료 {date}", "expires {date}")


def no_coupons(locale: str, player_id: str | None) -> str:
    if player_id:
        return say(locale, f"플레이어 {player_id}의 쿠폰이 없습니다.", f"No coupons for player {player_id}.")
    return say(locale, "쿠폰이 없습니다.", "No coupons.")


def describe_coupon(coupon: Coupon, locale: str, timezone: str) -> str:
    """`20,000원 쿠폰 ARCA-7K2P-9XQM (만료 2026-04-01)`; a pending coupon's code is not given out."""
    amount = format_krw(coupon.amount, locale)
    if coupon.status == "pending":
        return say(locale, f"승인 대기 중인 {amount} 쿠폰 요청", f"a {amount} coupon awaiting staff approval")
    expires = local_date(coupon.expires_at, timezone)
    return say(
        locale,
        f"{amount} 쿠폰 {coupon.code} (만료 {expires})",
        f"a {amount} coupon {coupon.code} (expires {expires})",
    )


def issued(coupon: Coupon, locale: str, timezone: str) -> str:
    """The ISSUED observation: amount, code and expiry, to be passed on as written."""
    msg = ISSUED(
        locale,
        order=coupon.order_id,
        amount=format_krw(coupon.amount, locale),
        code=coupon.code,
        expires=local_date(coupon.expires_at, timezone),
    )
    if coupon.status != "active":
        msg += ISSUED_NOW_IN_STATUS(locale, status=coupon.status)
    return msg


def not_eligible(order_id: str, status: str, eligible: Sequence[str], locale: str) -> str:
    return NOT_ELIGIBLE(
        locale,
        order=order_id,
        status=status_label(status, locale),
        eligible=", ".join(status_label(s, locale) for s in eligible),
    )


def coupon_line(coupon: Coupon, locale: str, timezone: str) -> str:
    """One row of `/coupon list`."""
    expires = EXPIRES_ON(locale, date=local_date(coupon.expires_at, timezone))
    amount = format_krw(coupon.amount, locale)
    return f"{coupon.order_id} · {coupon.player_id} · {amount} · {coupon.status} · {coupon.code} · {expires}"
