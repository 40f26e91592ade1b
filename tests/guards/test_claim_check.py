"""The claim check: "a coupon was issued" must be backed by this run's results or the ledger, else replaced."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from pydantic import BaseModel
from sqlalchemy import select

from bot.guards.output import OutputGuard, check_claims, parse_claim
from bot.store import AuditEntry
from tests.support.context import NOW
from tools.base import Actor, ResultCode, ToolContext, ToolResult, tool
from tools.coupon_rules import CouponRules
from tools.ledger import issue_for_player

LUNA = Actor(discord_id="9001", player_id="P100")


async def run_issue(store, amount, order_id="ORD001", key="k1", rules=None):
    return await issue_for_player(
        store,
        rules or CouponRules(),
        actor=LUNA,
        order_id=order_id,
        amount=amount,
        idempotency_key=key,
        now=NOW,
    )


@pytest.mark.parametrize(
    "claim",
    [
        "20,000원 쿠폰을 발급했습니다.",
        "쿠폰을 발급해 드렸어요!",
        "보상 쿠폰 발급 완료!",
        "쿠폰이 발급되었습니다.",
        "I've issued a 5,000 KRW coupon for you.",
        "Your coupon has been issued.",
        "A coupon was issued to your account.",
    ],
)
async def test_claims_without_any_issue_attempt_are_replaced(store, claim):
    v = await check_claims(f"확인했습니다. {claim} 감사합니다.", outcomes=[], store=store, locale="ko")
    assert v.replaced
    assert v.text == "확인했습니다. 쿠폰은 발급되지 않았습니다. 감사합니다."


@pytest.mark.parametrize(
    "refusal",
    [
        "죄송하지만 쿠폰을 발급할 수 없습니다.",
        "쿠폰은 발급되지 않았습니다.",
        "쿠폰을 발급하지 못했습니다.",
        "I'm sorry, I can't issue a coupon for a delivered order.",
        "The coupon was not issued.",
        "No coupon has been issued yet.",
        "Coupons can be issued only for delayed orders.",
        "쿠폰이 발급되었는지 확인해 볼게요.",
        "한도 이하로 다시 요청하시면 발급해 드릴게요.",
    ],
)
async def test_honest_refusals_and_non_claims_pass_untouched(store, refusal):
    v = await check_claims(refusal, outcomes=[], store=store, locale="ko")
    assert not v.replaced and v.text == refusal


async def test_over_limit_claim_is_replaced_by_the_real_reason(store):
    over = await run_issue(store, 30000)
    assert over.code == ResultCode.AMOUNT_OVER_LIMIT
    v = await check_claims(
        "30,000원 쿠폰을 발급했습니다. 다른 문의 있으신가요?", outcomes=[over], store=store
    )
    assert v.text == "쿠폰은 발급되지 않았습니다: 1회 한도(20,000원)를 넘었습니다. 다른 문의 있으신가요?"
    assert "30,000원 쿠폰을 발급" not in v.text


async def test_issued_result_backs_the_claim_with_the_same_amount(store):
    over = await run_issue(store, 30000, key="a")
    ok = await run_issue(store, 20000, key="b")
    text = "1회 한도가 20,000원이라 ORD001에 20,000원 쿠폰을 발급했습니다."
    v = await check_claims(text, outcomes=[over, ok], store=store)
    assert not v.replaced and v.text == text


async def test_a_different_amount_than_issued_is_unbacked(store):
    ok = await run_issue(store, 20000)
    v = await check_claims("30,000원 쿠폰을 발급했습니다.", outcomes=[ok], store=store)
    assert v.replaced and "30,000원" not in v.text
    assert ok.data["coupon"]["code"] in v.text and "20,000원" in v.text and "2026-04-01" in v.text


async def test_english_claim_is_replaced_in_english(store):
    over = await run_issue(store, 30000)
    v = await check_claims("I've issued a 30,000 KRW coupon.", outcomes=[over], store=store, locale="en")
    assert v.text == "No coupon was issued: the amount is over the per-coupon limit of 20,000 KRW."


async def test_claim_naming_an_order_is_backed_by_the_ledger(store):
    # ORD005 has an active 10,000원 coupon from an earlier run.
    v = await check_claims("ORD005에는 10,000원 쿠폰을 발급해 드렸어요.", outcomes=[], store=store)
    assert not v.replaced
    wrong = await check_claims("ORD005에는 30,000원 쿠폰을 발급해 드렸어요.", outcomes=[], store=store)
    assert wrong.replaced
    none = await check_claims("ORD001에 쿠폰을 발급했습니다.", outcomes=[], store=store)
    assert none.replaced


async def test_already_issued_wording_is_backed_by_already_issued(store):
    first = await run_issue(store, 5000, key="a")
    again = await run_issue(store, 5000, key="b")
    assert again.code == ResultCode.ALREADY_ISSUED
    text = "이 주문에는 이미 5,000원 쿠폰이 발급되어 있습니다."
    assert not (await check_claims(text, outcomes=[again], store=store)).replaced
    # "issued" wording needs ISSUED in this run; ALREADY_ISSUED alone does not back it.
    v = await check_claims("5,000원 쿠폰을 발급했습니다.", outcomes=[again], store=store)
    assert v.replaced and first.data["coupon"]["code"] not in v.text
    assert v.text.startswith("쿠폰은 발급되지 않았습니다: 주문 ORD001에는 이미 5,000원 쿠폰이 있습니다")


async def test_fabricated_already_issued_excuse_is_replaced(store):
    over = await run_issue(store, 30000)
    v = await check_claims(
        "이미 발급된 쿠폰이 있어 추가 발급은 할 수 없습니다.", outcomes=[over], store=store
    )
    assert v.replaced and "1회 한도(20,000원)" in v.text


async def test_a_made_up_coupon_code_is_unbacked(store):
    ok = await run_issue(store, 5000)
    real = ok.data["coupon"]["code"]
    text = f"쿠폰 코드는 {real}입니다."
    assert not (await check_claims(text, outcomes=[ok], store=store)).replaced
    v = await check_claims("쿠폰 코드는 ARCA-FAKE-9999입니다.", outcomes=[ok], store=store)
    assert v.replaced and "ARCA-FAKE-9999" not in v.text


async def test_pending_approval_is_not_an_issued_coupon(store):
    pending = await run_issue(store, 15000, rules=CouponRules(approval_threshold=10000))
    v = await check_claims("15,000원 쿠폰을 발급했습니다.", outcomes=[pending], store=store)
    assert v.text == "쿠폰은 아직 발급되지 않았습니다: 운영진 승인을 기다리고 있습니다."


async def test_only_one_truthful_sentence_replaces_several_false_ones(store):
    text = "쿠폰을 발급했습니다. 코드는 ARCA-FAKE-2222입니다. 좋은 하루 되세요."
    v = await check_claims(text, outcomes=[], store=store)
    assert v.text == "쿠폰은 발급되지 않았습니다. 좋은 하루 되세요."
    assert len(v.details) == 2


async def test_replacement_is_audited(store):
    await check_claims(
        "쿠폰을 발급했습니다.", outcomes=[], store=store, actor=LUNA, thread_id="test:1", locale="ko"
    )
    async with store.session() as s:
        [row] = (
            (await s.execute(select(AuditEntry).where(AuditEntry.action == "guard.claim_replaced")))
            .scalars()
            .all()
        )
    assert row.actor == "player:P100" and row.thread_id == "test:1"
    assert json.loads(row.detail)["removed"] == "쿠폰을 발급했습니다."


async def test_outcomes_may_be_tool_name_and_result_pairs_or_mappings(store):
    ok = ToolResult(
        True,
        "ISSUED",
        "…",
        {
            "order_id": "ORD009",
            "amount": 3000,
            "coupon": {"code": "ARCA-AAAA-BBBB", "amount": 3000, "order_id": "ORD009"},
        },
    )
    as_pair = await check_claims("3,000원 쿠폰을 발급했습니다.", outcomes=[("issue_coupon", ok)], store=store)
    as_map = await check_claims(
        "3,000원 쿠폰을 발급했습니다.", outcomes=[{"code": "ISSUED", "data": ok.data}], store=store
    )
    assert not as_pair.replaced and not as_map.replaced


@dataclass
class EngineOutcome:
    """Shaped like the engine's ToolOutcome: the guard reads `.name` and `.result`."""

    name: str
    result: ToolResult


async def test_engine_tool_outcomes_back_claims(store):
    ok = await run_issue(store, 20000)
    outcomes = [EngineOutcome("lookup_order", ToolResult(True, "OK", "…")), EngineOutcome("issue_coupon", ok)]
    v = await check_claims("20,000원 쿠폰을 발급했습니다.", outcomes=outcomes, store=store)
    assert not v.replaced
    over = await run_issue(store, 30000, key="k2")
    v = await check_claims(
        "30,000원 쿠폰을 발급했습니다.", outcomes=[EngineOutcome("issue_coupon", over)], store=store
    )
    assert v.text == "쿠폰은 발급되지 않았습니다: 1회 한도(20,000원)를 넘었습니다."


def test_parse_claim_picks_the_coupon_amount_not_the_limit() -> None:
    claim = parse_claim("1회 한도가 20,000원이라 ORD001에 15,000원 쿠폰을 발급했습니다.")
    assert claim.issued and claim.orders == ("ORD001",) and claim.specific_amounts == (15000,)
    assert parse_claim("3만원 쿠폰을 발급해 드렸어요").specific_amounts == (30000,)


class _OrderArgs(BaseModel):
    order_id: str


@tool(name="grant_voucher", coupon_outcome=True)
async def _grant_voucher(args: _OrderArgs, ctx: ToolContext) -> ToolResult:
    """Grant a voucher (a second coupon tool, declared as one)."""
    return ToolResult(False, ResultCode.ORDER_NOT_FOUND, "no such order")


@tool(name="lookup_gift")
async def _lookup_gift(args: _OrderArgs, ctx: ToolContext) -> ToolResult:
    """Look up a gift (not a coupon tool)."""
    return ToolResult(False, ResultCode.ORDER_NOT_FOUND, "no such order")


async def test_the_guard_reads_which_tools_give_coupon_outcomes_from_the_tools_themselves(store):
    missing = ToolResult(False, ResultCode.ORDER_NOT_FOUND, "no such order")
    guard = OutputGuard(store=store, actor=LUNA, locale="ko", tools=[_grant_voucher, _lookup_gift])
    declared = await guard.check("쿠폰을 발급했습니다.", outcomes=[("grant_voucher", missing)])
    assert declared.text == "쿠폰은 발급되지 않았습니다: 주문을 찾을 수 없습니다."
    undeclared = await guard.check("쿠폰을 발급했습니다.", outcomes=[("lookup_gift", missing)])
    assert undeclared.text == "쿠폰은 발급되지 않았습니다."
