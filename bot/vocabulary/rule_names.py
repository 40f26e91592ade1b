"""The coupon rules' keys (`policies/coupon_rules.yaml`: `daily_max_count`, `max_amount`, …) named as staff
read them, in Korean and English; the key itself stays behind a tooltip or in brackets."""

from __future__ import annotations

COUPON_RULE_WORDS: dict[str, tuple[str, str]] = {
    "eligible_statuses": ("보상 가능한 주문 상태", "eligible order statuses"),
    "min_amount": ("쿠폰 최소 금액", "smallest coupon"),
    "max_amount": ("쿠폰 1장 최대 금액", "largest coupon"),
    "amount_step": ("금액 단위", "amount step"),
    "staff_max_amount": ("운영진 발급 최대 금액", "largest staff coupon"),
    "daily_max_count": ("플레이어 1인당 하루 쿠폰 수", "coupons per player per day"),
    "daily_max_amount": ("플레이어 1인당 하루 최대 금액", "amount per player per day"),
    "valid_days": ("쿠폰 유효 기간", "days a coupon is valid"),
    "approval_threshold": ("승인이 필요한 금액", "amount that needs approval"),
    "one_active_per_order": ("주문당 쿠폰 1장", "one coupon per order"),
}
"""Each coupon rule's name, (Korean, English)."""


def coupon_rule_words(key: str, lang: str) -> str:
    """The rule's name in `lang`; an unknown key as it is."""
    words = COUPON_RULE_WORDS.get(key)
    if words is None:
        return key
    return words[0] if lang == "ko" else words[1]
