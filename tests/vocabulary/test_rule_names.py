"""Coupon rules named in words (issue 51): every key of `CouponRules` has a Korean and an English name, so
no staff page or card shows `daily_max_count` alone."""

from __future__ import annotations

from bot.vocabulary.rule_names import COUPON_RULE_WORDS, coupon_rule_words
from tools.coupon_rules import CouponRules


def test_every_coupon_rule_has_a_name() -> None:
    keys = set(CouponRules.model_fields) - {"currency"}
    assert keys - set(COUPON_RULE_WORDS) == set()
    assert coupon_rule_words("daily_max_count", "ko") == "플레이어 1인당 하루 쿠폰 수"
    assert coupon_rule_words("max_amount", "en") == "largest coupon"
    assert coupon_rule_words("unknown_key", "ko") == "unknown_key"
