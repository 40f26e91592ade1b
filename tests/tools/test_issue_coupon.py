"""issue_coupon: every result code, the check order, the ISSUED message, idempotency, approval and daily caps."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from bot.store import AuditEntry, Coupon, Order
from tests.support.context import LUNA, STAFF, UNLINKED
from tools.base import ResultCode
from tools.coupon_rules import CouponRules


async def issue(registry, ctx, **args):
    return await registry.execute("issue_coupon", args, ctx)


async def coupons(store, order_id=None):
    async with store.session() as s:
        q = select(Coupon)
        if order_id:
            q = q.where(Coupon.order_id == order_id)
        return list((await s.execute(q)).scalars())


async def test_eligible_order_gets_a_coupon_with_code_and_expiry_in_the_message(registry, ctx_for, store):
    res = await issue(registry, ctx_for(), order_id="ORD001", amount=20000)
    assert res.code == ResultCode.ISSUED and res.ok
    [coupon] = await coupons(store, "ORD001")
    assert coupon.status == "active" and coupon.amount == 20000
    assert coupon.code.startswith("ARCA-") and len(coupon.code) == 14
    assert coupon.expires_at - coupon.created_at == timedelta(days=30)
    assert "20,000원" in res.message and coupon.code in res.message and "2026-04-01" in res.message
    assert res.data["coupon"]["code"] == coupon.code


async def test_issued_message_is_english_when_the_conversation_is(registry, ctx_for):
    res = await issue(registry, ctx_for(locale="en"), order_id="ORD001", amount=5000)
    assert res.code == ResultCode.ISSUED
    assert "5,000 KRW" in res.message and "valid until 2026-04-01" in res.message


async def test_unlinked_actor_gets_not_linked_from_the_tool_function(ctx_for, store):
    from tools.coupons import IssueCouponArgs, issue_coupon

    # The registry would deny an unlinked user first; the guard inside the function must hold on its own.
    res = await issue_coupon.fn(IssueCouponArgs(order_id="ORD001", amount=5000), ctx_for(UNLINKED))
    assert res.code == ResultCode.NOT_LINKED
    assert not await coupons(store)


async def test_unlinked_staff_is_pointed_to_the_staff_command(registry, ctx_for):
    res = await issue(registry, ctx_for(STAFF), order_id="ORD001", amount=5000)
    assert res.code == ResultCode.NOT_LINKED and "/coupon issue" in res.message


async def test_missing_order_is_order_not_found(registry, ctx_for):
    res = await issue(registry, ctx_for(), order_id="ORD999", amount=5000)
    assert res.code == ResultCode.ORDER_NOT_FOUND


async def test_another_players_order_answers_like_a_missing_one(registry, ctx_for, store):
    other = await issue(registry, ctx_for(), order_id="ORD003", amount=5000)
    missing = await issue(registry, ctx_for(), order_id="ORD998", amount=5000)
    assert other.code == missing.code == ResultCode.ORDER_NOT_FOUND
    assert other.message.replace("ORD003", "X") == missing.message.replace("ORD998", "X")
    assert not await coupons(store, "ORD003")
    async with store.session() as s:
        rows = (await s.execute(select(AuditEntry).where(AuditEntry.target == "ORD003"))).scalars().all()
    assert json.loads(rows[-1].detail)["why"] == "other_player"


async def test_delivered_order_is_not_eligible_and_the_reason_names_the_status(registry, ctx_for):
    res = await issue(registry, ctx_for(), order_id="ORD002", amount=5000)
    assert res.code == ResultCode.NOT_ELIGIBLE_STATUS
    assert "배송 완료 (delivered)" in res.message and "배송 지연" in res.message


async def test_over_limit_names_the_limit_so_the_model_can_retry(registry, ctx_for, store):
    res = await issue(registry, ctx_for(), order_id="ORD001", amount=30000)
    assert res.code == ResultCode.AMOUNT_OVER_LIMIT
    assert "1회 최대 20,000원까지 발급할 수 있습니다" in res.message
    assert "20,000원 이하로 다시 요청하세요" in res.message
    assert res.data["limit"] == 20000
    retry = await issue(registry, ctx_for(), order_id="ORD001", amount=20000)
    assert retry.code == ResultCode.ISSUED


async def test_invalid_amounts_are_refused_with_a_reason(registry, ctx_for, store):
    for amount in (0, -5000, 500, 5500):
        res = await issue(registry, ctx_for(), order_id="ORD001", amount=amount)
        assert res.code == ResultCode.INVALID_AMOUNT, amount
    assert not await coupons(store)


async def test_second_coupon_for_an_order_is_already_issued_and_names_the_first(registry, ctx_for, store):
    first = await issue(registry, ctx_for(), order_id="ORD001", amount=10000)
    again = await issue(registry, ctx_for(), order_id="ORD001", amount=5000)
    assert again.code == ResultCode.ALREADY_ISSUED
    assert first.data["coupon"]["code"] in again.message and "10,000원" in again.message
    assert len(await coupons(store, "ORD001")) == 1


async def test_checks_run_in_the_documented_order(registry, ctx_for):
    # Every later check would fail too; the first failing one must answer.
    ctx = ctx_for()
    assert (await issue(registry, ctx, order_id="ORD003", amount=-1)).code == ResultCode.ORDER_NOT_FOUND
    assert (
        await issue(registry, ctx_for(), order_id="ORD002", amount=-1)
    ).code == ResultCode.NOT_ELIGIBLE_STATUS
    await issue(registry, ctx_for(), order_id="ORD001", amount=5000)
    # Amount is checked before "already issued".
    assert (
        await issue(registry, ctx_for(), order_id="ORD001", amount=99000)
    ).code == ResultCode.AMOUNT_OVER_LIMIT
    assert (
        await issue(registry, ctx_for(), order_id="ORD001", amount=5000)
    ).code == ResultCode.ALREADY_ISSUED


async def test_order_id_is_normalised(registry, ctx_for):
    res = await issue(registry, ctx_for(), order_id="  ord001 ", amount=5000)
    assert res.code == ResultCode.ISSUED and res.data["order_id"] == "ORD001"


async def test_same_idempotency_key_twice_issues_once_and_returns_the_same_result(registry, ctx_for, store):
    ctx = ctx_for(call_id="call_same")
    first = await issue(registry, ctx, order_id="ORD001", amount=7000)
    second = await issue(registry, ctx, order_id="ORD001", amount=7000)
    assert first.code == second.code == ResultCode.ISSUED
    assert first.data["coupon"]["code"] == second.data["coupon"]["code"]
    assert second.data["replayed"] is True
    assert len(await coupons(store)) == 1


async def test_lax_integer_forms_are_accepted_and_fractions_rejected_by_the_registry(registry, ctx_for):
    assert (await issue(registry, ctx_for(), order_id="ORD100", amount="20000")).code == ResultCode.ISSUED
    assert (await issue(registry, ctx_for(), order_id="ORD101", amount=5000.0)).code == ResultCode.ISSUED
    bad = await issue(registry, ctx_for(), order_id="ORD102", amount=5000.5)
    assert bad.code == ResultCode.ERROR and "amount" in bad.message
    bad = await issue(registry, ctx_for(), order_id="ORD102", amount="오천원")
    assert bad.code == ResultCode.ERROR and "amount" in bad.message


async def test_above_the_approval_threshold_the_coupon_waits_and_staff_are_notified(registry, ctx_for, store):
    calls = []

    async def notify(kind, payload):
        calls.append((kind, payload))

    strict = CouponRules(approval_threshold=10000)
    res = await issue(registry, ctx_for(rules=strict, notify=notify), order_id="ORD001", amount=15000)
    assert res.code == ResultCode.PENDING_APPROVAL and not res.ok
    [coupon] = await coupons(store, "ORD001")
    assert coupon.status == "pending"
    assert coupon.code not in res.message  # not usable yet, so not given out
    assert calls == [("approval", calls[0][1])] and calls[0][1]["order_id"] == "ORD001"
    assert calls[0][1]["amount"] == 15000
    at_threshold = await issue(registry, ctx_for(rules=strict), order_id="ORD100", amount=10000)
    assert at_threshold.code == ResultCode.ISSUED
    # A pending coupon holds the order's slot.
    again = await issue(registry, ctx_for(rules=strict), order_id="ORD001", amount=5000)
    assert again.code == ResultCode.ALREADY_ISSUED


async def test_failing_staff_notifier_does_not_lose_the_pending_coupon(registry, ctx_for, store):
    async def broken(kind, payload):
        raise ConnectionError("staff channel down")

    res = await issue(
        registry,
        ctx_for(rules=CouponRules(approval_threshold=10000), notify=broken),
        order_id="ORD001",
        amount=15000,
    )
    assert res.code == ResultCode.PENDING_APPROVAL
    assert [c.status for c in await coupons(store, "ORD001")] == ["pending"]


async def test_daily_count_cap_counts_seoul_calendar_days(registry, ctx_for, clock, store):
    # 2026-03-02 23:30 KST is still the same Seoul day as 10:00 KST.
    for order_id in ("ORD100", "ORD101", "ORD102"):
        assert (await issue(registry, ctx_for(), order_id=order_id, amount=1000)).code == ResultCode.ISSUED
    clock.now = datetime(2026, 3, 2, 14, 30, tzinfo=UTC)
    capped = await issue(registry, ctx_for(), order_id="ORD103", amount=1000)
    assert capped.code == ResultCode.DAILY_LIMIT_REACHED and "3" in capped.message
    # 2026-03-03 00:00 KST = 2026-03-02 15:00 UTC: a new Seoul day, although UTC is still March 2.
    clock.now = datetime(2026, 3, 2, 15, 0, tzinfo=UTC)
    assert (await issue(registry, ctx_for(), order_id="ORD103", amount=1000)).code == ResultCode.ISSUED


async def test_daily_amount_cap_says_how_much_is_left(registry, ctx_for):
    rules = CouponRules(daily_max_amount=30000)
    assert (
        await issue(registry, ctx_for(rules=rules), order_id="ORD100", amount=20000)
    ).code == ResultCode.ISSUED
    res = await issue(registry, ctx_for(rules=rules), order_id="ORD101", amount=15000)
    assert res.code == ResultCode.DAILY_LIMIT_REACHED
    assert "10,000원 이하로" in res.message and res.data["remaining"] == 10000
    assert (
        await issue(registry, ctx_for(rules=rules), order_id="ORD101", amount=10000)
    ).code == ResultCode.ISSUED


async def test_revoked_coupons_do_not_hold_the_order_or_the_daily_cap(registry, ctx_for, store):
    from tools.coupon_staff import revoke

    await issue(registry, ctx_for(), order_id="ORD001", amount=5000)
    assert (await revoke(store, actor=STAFF, order_id="ORD001", reason="test")).ok
    assert (await issue(registry, ctx_for(), order_id="ORD001", amount=6000)).code == ResultCode.ISSUED


async def test_every_decision_is_audited_with_code_actor_thread_order_and_amount(registry, ctx_for, store):
    await issue(registry, ctx_for(), order_id="ORD001", amount=30000)
    await issue(registry, ctx_for(), order_id="ORD001", amount=20000)
    async with store.session() as s:
        rows = (
            (
                await s.execute(
                    select(AuditEntry).where(AuditEntry.action == "coupon.issue").order_by(AuditEntry.id)
                )
            )
            .scalars()
            .all()
        )
    assert [r.code for r in rows] == ["AMOUNT_OVER_LIMIT", "ISSUED"]
    assert all(r.actor == LUNA.label and r.thread_id == "test:1" and r.target == "ORD001" for r in rows)
    assert [json.loads(r.detail)["amount"] for r in rows] == [30000, 20000]


async def test_rules_come_from_the_yaml_file_when_not_injected(registry, ctx_for, store):
    from dataclasses import replace

    from tools.base import ToolServices

    ctx = replace(ctx_for(), services=ToolServices())
    res = await issue(registry, ctx, order_id="ORD001", amount=25000)
    assert res.code == ResultCode.AMOUNT_OVER_LIMIT and res.data["limit"] == 20000


async def test_order_status_change_is_seen_immediately(registry, ctx_for, store):
    async with store.session() as s:
        (await s.get(Order, "ORD002")).status = "delayed"
        await s.commit()
    assert (await issue(registry, ctx_for(), order_id="ORD002", amount=5000)).code == ResultCode.ISSUED
