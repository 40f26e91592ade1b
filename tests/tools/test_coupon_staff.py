"""The ledger service behind the staff /coupon commands: issue, revoke, approve, list, active coupon."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from sqlalchemy import select

from bot.store import AuditEntry
from tests.support.context import LUNA, NOW, STAFF
from tools.base import Actor, ResultCode
from tools.coupon_rules import CouponRules
from tools.coupon_staff import active_coupon_for, approval_reason, approve, list_coupons, reject, revoke
from tools.ledger import issue_for_player, staff_issue


async def test_staff_issue_skips_status_and_caps_but_keeps_the_staff_limit(store, rules):
    # ORD002 is delivered (not eligible for the bot), ORD003 belongs to another player.
    ok = await staff_issue(
        store, rules, actor=STAFF, order_id="ord002", amount=100000, reason="VIP", idempotency_key="k1"
    )
    assert ok.code == ResultCode.ISSUED and ok.data["coupon"]["amount"] == 100000
    over = await staff_issue(
        store, rules, actor=STAFF, order_id="ORD003", amount=101000, reason=None, idempotency_key="k2"
    )
    assert over.code == ResultCode.AMOUNT_OVER_LIMIT and "100,000원" in over.message
    again = await staff_issue(
        store, rules, actor=STAFF, order_id="ORD002", amount=1000, reason=None, idempotency_key="k3"
    )
    assert again.code == ResultCode.ALREADY_ISSUED
    missing = await staff_issue(
        store, rules, actor=STAFF, order_id="NOPE1", amount=1000, reason=None, idempotency_key="k4"
    )
    assert missing.code == ResultCode.ORDER_NOT_FOUND


async def test_staff_issue_is_idempotent_on_its_key(store, rules):
    a = await staff_issue(
        store, rules, actor=STAFF, order_id="ORD001", amount=5000, reason=None, idempotency_key="same"
    )
    b = await staff_issue(
        store, rules, actor=STAFF, order_id="ORD001", amount=5000, reason=None, idempotency_key="same"
    )
    assert a.code == b.code == ResultCode.ISSUED and a.data["coupon"]["code"] == b.data["coupon"]["code"]


async def test_non_staff_cannot_use_staff_operations_and_the_attempt_is_audited(store, rules):
    res = await staff_issue(
        store, rules, actor=LUNA, order_id="ORD001", amount=5000, reason=None, idempotency_key="x"
    )
    assert res.code == ResultCode.DENIED
    assert (await revoke(store, actor=LUNA, order_id="ORD001")).code == ResultCode.DENIED
    assert (await approve(store, actor=LUNA, order_id="ORD001")).code == ResultCode.DENIED
    async with store.session() as s:
        codes = (
            (await s.execute(select(AuditEntry.code).where(AuditEntry.actor == LUNA.label))).scalars().all()
        )
    assert codes.count("DENIED") == 3


async def test_revoke_frees_the_order_and_is_audited(store, rules):
    await staff_issue(
        store, rules, actor=STAFF, order_id="ORD001", amount=5000, reason=None, idempotency_key="k"
    )
    res = await revoke(store, actor=STAFF, order_id="ORD001", reason="잘못 발급")
    assert res.code == ResultCode.OK and res.data["coupon"]["status"] == "revoked"
    assert (await active_coupon_for(store, "ORD001")).data["coupon"] is None
    nothing = await revoke(store, actor=STAFF, order_id="ORD001")
    assert nothing.code == ResultCode.ERROR and not nothing.ok
    assert (await revoke(store, actor=STAFF, order_id="ORD404")).code == ResultCode.ORDER_NOT_FOUND
    async with store.session() as s:
        rows = (
            (await s.execute(select(AuditEntry).where(AuditEntry.action == "coupon.revoke"))).scalars().all()
        )
    assert [r.code for r in rows] == ["OK", "ERROR", "ORDER_NOT_FOUND"]


async def test_approve_turns_pending_into_active_with_validity_from_approval(store):
    rules = CouponRules(approval_threshold=10000)
    pending = await issue_for_player(
        store, rules, actor=LUNA, order_id="ORD001", amount=15000, idempotency_key="p", now=NOW
    )
    assert pending.code == ResultCode.PENDING_APPROVAL
    later = datetime(2026, 3, 5, 1, 0, tzinfo=UTC)
    res = await approve(store, actor=STAFF, order_id="ORD001", now=later)
    assert res.code == ResultCode.OK and res.data["coupon"]["status"] == "active"
    assert res.data["coupon"]["expires_at"].startswith("2026-04-04")
    # A second approval (a lost race) says who approved it and when, not "nothing awaits approval".
    again = await approve(store, actor=STAFF, order_id="ORD001")
    assert again.code == ResultCode.ALREADY_ISSUED and not again.ok
    assert again.message.startswith("주문 ORD001의 쿠폰은 이미 ") and "승인했습니다" in again.message
    assert again.data["decided_by"] and again.data["decided_at"]


async def test_losing_an_approval_race_names_who_approved_and_when(store):
    rules = CouponRules(approval_threshold=10000)
    await issue_for_player(
        store, rules, actor=LUNA, order_id="ORD001", amount=15000, idempotency_key="p", now=NOW
    )
    mina = Actor(discord_id="4242", roles=frozenset({"Support Staff"}), is_staff=True, display_name="Mina")
    assert (await approve(store, actor=mina, order_id="ORD001")).code == ResultCode.OK
    async with store.session() as s:
        at = (
            await s.execute(select(AuditEntry.at).where(AuditEntry.action == "coupon.approve"))
        ).scalar_one()
    when = at.astimezone(ZoneInfo("Asia/Seoul")).strftime("%Y-%m-%d %H:%M")

    ko = await approve(store, actor=STAFF, order_id="ORD001")
    assert ko.message.startswith(
        f"주문 ORD001의 쿠폰은 이미 Mina 님이 {when}에 승인했습니다: 15,000원 쿠폰 ARCA-"
    )
    en = await approve(store, actor=STAFF, order_id="ORD001", locale="en")
    assert en.message.startswith(f"The coupon of order ORD001 was already approved by Mina at {when}")
    late_reject = await reject(store, actor=STAFF, order_id="ORD001")
    assert "이미 Mina 님이" in late_reject.message and "/coupon revoke ORD001" in late_reject.message
    assert "ERROR" not in late_reject.message and late_reject.code == ResultCode.ALREADY_ISSUED


async def test_rejecting_a_pending_coupon_says_it_was_rejected_not_revoked(store):
    rules = CouponRules(approval_threshold=10000)
    await issue_for_player(
        store, rules, actor=LUNA, order_id="ORD001", amount=15000, idempotency_key="p", now=NOW
    )
    mina = Actor(discord_id="4242", roles=frozenset({"Support Staff"}), is_staff=True, display_name="Mina")
    res = await reject(store, actor=mina, order_id="ORD001")
    assert (
        res.message
        == "주문 ORD001의 승인 대기 쿠폰 요청(15,000원)을 거절했습니다. 쿠폰은 발급되지 않았습니다."
    )
    for never_issued in ("취소", "ARCA-", "만료"):
        assert never_issued not in res.message
    again = await approve(store, actor=STAFF, order_id="ORD001", locale="en")
    assert again.message.startswith("The coupon request of order ORD001 was already rejected by Mina at ")


def test_an_approval_says_why_with_the_rule_and_the_figures():
    assert approval_reason({"threshold": 30000}, 50000, "ko") == "승인 기준 30,000원 초과: 요청 50,000원"
    assert approval_reason({"threshold": 30000}, 50000, "en") == (
        "Over the approval threshold of 30,000 KRW: asked 50,000 KRW"
    )
    assert approval_reason({"review": "untrusted_request"}, 5000, "ko").startswith(
        "입력이 신뢰할 수 없음으로 표시됨"
    )
    assert approval_reason({}, 5000, "ko") == ""


async def test_revoking_a_pending_coupon_rejects_it(store):
    rules = CouponRules(approval_threshold=10000)
    await issue_for_player(
        store, rules, actor=LUNA, order_id="ORD001", amount=15000, idempotency_key="p", now=NOW
    )
    res = await revoke(store, actor=STAFF, order_id="ORD001", reason="과다")
    assert res.data["coupon"]["status"] == "rejected"
    assert "거절했습니다" in res.message and "ARCA-" not in res.message


async def test_list_coupons_filters_by_player(store, rules):
    await staff_issue(
        store, rules, actor=STAFF, order_id="ORD001", amount=5000, reason=None, idempotency_key="a"
    )
    await staff_issue(
        store, rules, actor=STAFF, order_id="ORD003", amount=6000, reason=None, idempotency_key="b"
    )
    everyone = await list_coupons(store)
    assert {c["order_id"] for c in everyone.data["coupons"]} == {"ORD001", "ORD003"}
    luna = await list_coupons(store, "P100")
    assert [c["order_id"] for c in luna.data["coupons"]] == ["ORD001"]
    assert "ORD001" in luna.message and "ORD003" not in luna.message and "P200" not in luna.message
    assert (await list_coupons(store, "P999")).data["coupons"] == []


async def test_active_coupon_for_reports_the_live_coupon(store, rules):
    assert (await active_coupon_for(store, "ORD001")).data["coupon"] is None
    issued = await staff_issue(
        store, rules, actor=STAFF, order_id="ORD001", amount=5000, reason=None, idempotency_key="a"
    )
    found = await active_coupon_for(store, " ord001 ")
    assert found.data["coupon"]["code"] == issued.data["coupon"]["code"]
