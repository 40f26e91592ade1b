"""Amount validity at the boundaries, property-tested: the guard, and what reaches it through the registry."""

from __future__ import annotations

import math
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from tools.base import ResultCode
from tools.coupon_rules import CouponRules, check_amount
from tools.coupons import IssueCouponArgs

RULES = CouponRules()


def expected(amount: int) -> ResultCode | None:
    if amount <= 0 or amount < RULES.min_amount:
        return ResultCode.INVALID_AMOUNT
    if amount > RULES.max_amount:
        return ResultCode.AMOUNT_OVER_LIMIT
    if amount % RULES.amount_step:
        return ResultCode.INVALID_AMOUNT
    return None


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_any_integer_is_classified_by_the_documented_rule(amount: int) -> None:
    verdict = check_amount(RULES, amount)
    assert (verdict[0] if verdict else None) == expected(amount)


@given(
    st.sampled_from([0, -1, -1000, 999, 1000, 1001, 19999, 20000, 20001, 21000, 10**18, -(10**18)])
    | st.integers(min_value=-3, max_value=3).map(lambda d: 20000 + d * 500)
    | st.integers(min_value=-3, max_value=3).map(lambda d: 1000 + d * 500)
)
def test_boundaries_around_min_and_max(amount: int) -> None:
    verdict = check_amount(RULES, amount)
    assert (verdict[0] if verdict else None) == expected(amount)
    if verdict and verdict[0] == ResultCode.AMOUNT_OVER_LIMIT:
        assert "20,000원" in verdict[1]


def test_over_limit_message_names_the_limit_in_both_languages() -> None:
    code, ko, _ = check_amount(RULES, 30000, locale="ko")
    assert code == ResultCode.AMOUNT_OVER_LIMIT
    assert "1회 최대 20,000원까지 발급할 수 있습니다" in ko and "20,000원 이하로 다시 요청하세요" in ko
    _, en, _ = check_amount(RULES, 30000, locale="en")
    assert "20,000 KRW" in en


def test_staff_limit_is_staff_max_amount() -> None:
    assert check_amount(RULES, 100_000, staff=True) is None
    assert check_amount(RULES, 101_000, staff=True)[0] == ResultCode.AMOUNT_OVER_LIMIT


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_fractional_or_non_finite_floats_never_become_amounts(value: float) -> None:
    whole = math.isfinite(value) and value.is_integer()
    try:
        args = IssueCouponArgs(order_id="ORD001", amount=value)
    except ValidationError:
        return
    # Only whole floats pass pydantic's lax int (the registry turns the rest into an invalid-args result).
    assert whole and isinstance(args.amount, int) and args.amount == value


@given(st.text(max_size=12))
def test_strings_are_amounts_only_when_they_are_integers(value: str) -> None:
    try:
        args = IssueCouponArgs(order_id="ORD001", amount=value)
    except ValidationError:
        return
    assert isinstance(args.amount, int)
    assert Decimal(value.strip().replace("_", "")) == args.amount


def test_huge_integer_is_over_limit_not_a_crash() -> None:
    args = IssueCouponArgs(order_id="ORD001", amount=10**40)
    assert check_amount(RULES, args.amount)[0] == ResultCode.AMOUNT_OVER_LIMIT


def test_booleans_are_not_amounts() -> None:
    assert check_amount(RULES, True)[0] == ResultCode.INVALID_AMOUNT
