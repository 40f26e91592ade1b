"""Exactly-once issuance and the daily caps under concurrency, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
from collections import Counter

from sqlalchemy import func, select

from bot.store import Coupon, Store
from tests.support.context import NOW, STAFF
from tools.base import ResultCode
from tools.coupon_rules import CouponRules
from tools.coupon_staff import approve, revoke
from tools.ledger import staff_issue
from tools.registry import build_registry


async def live_coupons(store: Store, **where: str) -> int:
    async with store.session() as s:
        q = select(func.count(Coupon.id)).where(Coupon.status.in_(("active", "pending")))
        for key, value in where.items():
            q = q.where(getattr(Coupon, key) == value)
        return (await s.execute(q)).scalar_one()


async def test_hundred_concurrent_issue_coupon_calls_on_one_order_issue_exactly_one(store, ctx_for) -> None:
    registry = build_registry()
    results = await asyncio.gather(
        *(
            registry.execute(
                "issue_coupon", {"order_id": "ORD001", "amount": 5000}, ctx_for(call_id=f"race_{i}")
            )
            for i in range(100)
        )
    )
    assert Counter(r.code for r in results) == {ResultCode.ISSUED: 1, ResultCode.ALREADY_ISSUED: 99}
    assert await live_coupons(store, order_id="ORD001") == 1
    winner = next(r for r in results if r.code == ResultCode.ISSUED)
    # Every loser names the coupon that won, so the model tells the player the truth.
    assert all(winner.data["coupon"]["code"] in r.message for r in results if r is not winner)


async def test_concurrent_issues_on_different_orders_stop_at_the_daily_count(store, ctx_for) -> None:
    registry = build_registry()
    orders = [f"ORD1{i:02d}" for i in range(8)]
    results = await asyncio.gather(
        *(registry.execute("issue_coupon", {"order_id": o, "amount": 1000}, ctx_for()) for o in orders)
    )
    assert Counter(r.code for r in results) == {ResultCode.ISSUED: 3, ResultCode.DAILY_LIMIT_REACHED: 5}
    assert await live_coupons(store, player_id="P100") == 3


async def test_concurrent_issues_stop_at_the_daily_amount(store, ctx_for) -> None:
    registry = build_registry()
    rules = CouponRules(daily_max_amount=25_000, daily_max_count=10)
    results = await asyncio.gather(
        *(
            registry.execute(
                "issue_coupon", {"order_id": f"ORD1{i:02d}", "amount": 10_000}, ctx_for(rules=rules)
            )
            for i in range(6)
        )
    )
    assert Counter(r.code for r in results)[ResultCode.ISSUED] == 2
    async with store.session() as s:
        assert (await s.execute(select(func.sum(Coupon.amount)))).scalar_one() == 20_000


async def test_the_same_call_retried_concurrently_issues_once(store, ctx_for) -> None:
    registry = build_registry()
    ctx = ctx_for(call_id="retried")
    results = await asyncio.gather(
        *(registry.execute("issue_coupon", {"order_id": "ORD001", "amount": 5000}, ctx) for _ in range(20))
    )
    assert {r.code for r in results} == {ResultCode.ISSUED}
    assert len({r.data["coupon"]["code"] for r in results}) == 1
    assert await live_coupons(store) == 1


async def test_staff_and_bot_racing_on_one_order_leave_one_live_coupon(store, ctx_for) -> None:
    registry = build_registry()
    bot_calls = [
        registry.execute("issue_coupon", {"order_id": "ORD001", "amount": 5000}, ctx_for()) for _ in range(20)
    ]
    staff_calls = [
        staff_issue(
            store,
            CouponRules(),
            actor=STAFF,
            order_id="ORD001",
            amount=30_000,
            reason="race",
            idempotency_key=f"staff:{i}",
            now=NOW,
        )
        for i in range(20)
    ]
    results = await asyncio.gather(*bot_calls, *staff_calls)
    assert Counter(r.code for r in results)[ResultCode.ISSUED] == 1
    assert await live_coupons(store, order_id="ORD001") == 1


async def test_approve_and_revoke_racing_never_both_claim_the_same_pending_coupon(store, ctx_for) -> None:
    # Each pending coupon is approved and revoked at the same moment. Whatever order they run in, the
    # answers must agree with the ledger: a revoke that reports it rejected a *pending* coupon means the
    # approve must have failed, and the final status is what the later of the two said.
    registry = build_registry()
    rules = CouponRules(approval_threshold=5000, daily_max_count=20, daily_max_amount=500_000)
    orders = [f"ORD1{i:02d}" for i in range(10)]
    for o in orders:
        pending = await registry.execute(
            "issue_coupon", {"order_id": o, "amount": 10_000}, ctx_for(rules=rules)
        )
        assert pending.code == ResultCode.PENDING_APPROVAL
    pairs = await asyncio.gather(
        *(
            asyncio.gather(
                approve(store, actor=STAFF, order_id=o, now=NOW),
                revoke(store, actor=STAFF, order_id=o, reason="race", now=NOW),
            )
            for o in orders
        )
    )
    async with store.session() as s:
        final = dict((await s.execute(select(Coupon.order_id, Coupon.status))).all())
    for o, (approved, revoked) in zip(orders, pairs, strict=True):
        assert revoked.ok, revoked.message
        if revoked.data["previous_status"] == "pending":
            assert not approved.ok, f"{o}: approve said OK but the revoke rejected the pending coupon"
            assert final[o] == "rejected"
        else:
            assert approved.ok and revoked.data["previous_status"] == "active"
            assert final[o] == "revoked"
