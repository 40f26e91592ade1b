"""A coupon only for a player who asked for one: which messages ask (`bot.engine.unasked`). The whole run
is `tests/transcripts/policy_question_gets_no_coupon_it_did_not_ask_for.yaml`."""

from __future__ import annotations

import pytest

from bot.engine.unasked import NOT_ASKED, unasked_refusal


@pytest.mark.parametrize(
    "said",
    [
        ["How many compensation coupons can I get per day?"],
        ["보상 쿠폰 하루에 몇 장까지 받을 수 있어요? 하루 합계 금액 한도도 알려 주세요"],
        ["What is the most reward boxes I can get when maintenance runs late?"],
        ["ORD101 관련해서요. 보상 쿠폰은 하루에 최대 몇 장까지 받을 수 있나요?"],
        ["배송이 늦어요. 쿠폰 한도는 얼마예요?"],
    ],
)
def test_a_run_that_only_asks_about_a_rule_is_refused_a_coupon(said):
    refusal = unasked_refusal(said)
    assert refusal is not None and refusal.data["reason"] == NOT_ASKED
    assert "asked about a rule, not for a coupon" in refusal.message


@pytest.mark.parametrize(
    "said",
    [
        ["ORD101 배송이 늦어요. 만원 보상 쿠폰 부탁드려요"],
        ["하루 최대 몇 장이에요? 그리고 ORD101 배송이 늦어서 만원 보상 쿠폰 부탁드려요"],
        ["My order ORD301 is late, can I get a coupon?"],
        ["ORD101 배송이 너무 늦어요"],  # no rule asked about: a complaint may be compensated as before
        ["쿠폰 하루 한도가 몇 장이에요?", "그럼 ORD101에 5천원 쿠폰 주세요"],  # asked mid-run
        ["보상해 주세요"],
    ],
)
def test_a_run_that_asks_for_compensation_or_asks_no_rule_is_not_refused(said):
    assert unasked_refusal(said) is None
