"""The ledger service behind the staff /coupon commands: issue, revoke, approve, list, active coupon."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from bot.store import AuditEntry
from tools.base import ResultCode
from tools.ledger import (
    CouponRules,
    active_coupon_for,
    approve,
    issue_for_player,
    list_coupons,
    revoke,
    staff_issue,
)

from .conftest import LUNA, NOW, STAFF


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
    assert (await approve(store, actor=STAFF, order_id="ORD001")).code == ResultCode.ERROR


async def test_revoking_a_pending_coupon_rejects_it(store):
    rules = CouponRules(approval_threshold=10000)
    await issue_for_player(
        store, rules, actor=LUNA, order_id="ORD001", amount=15000, idempotency_key="p", now=NOW
    )
    res = await revoke(store, actor=STAFF, order_id="ORD001", reason="과다")
    assert res.data["coupon"]["status"] == "rejected"


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
