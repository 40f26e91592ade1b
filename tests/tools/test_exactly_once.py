"""Exactly-once issuance under concurrency on a real SQLite file (WAL): one order, one coupon; caps hold."""

from __future__ import annotations

import asyncio
from collections import Counter

from sqlalchemy import func, select

from bot.store import Coupon
from tests.support.context import STAFF
from tools.base import ResultCode
from tools.coupon_rules import CouponRules
from tools.ledger import staff_issue


async def live_count(store, **where):
    async with store.session() as s:
        q = select(func.count(Coupon.id)).where(Coupon.status.in_(("active", "pending")))
        for key, value in where.items():
            q = q.where(getattr(Coupon, key) == value)
        return (await s.execute(q)).scalar_one()


async def test_hundred_concurrent_issues_on_one_order_issue_exactly_one(registry, ctx_for, store):
    ctxs = [ctx_for(call_id=f"race_{i}") for i in range(100)]
    results = await asyncio.gather(
        *(registry.execute("issue_coupon", {"order_id": "ORD001", "amount": 5000}, c) for c in ctxs)
    )
    codes = Counter(r.code for r in results)
    assert codes == {ResultCode.ISSUED: 1, ResultCode.ALREADY_ISSUED: 99}
    assert await live_count(store, order_id="ORD001") == 1
    winner = next(r for r in results if r.code == ResultCode.ISSUED)
    assert all(
        winner.data["coupon"]["code"] in r.message for r in results if r.code == ResultCode.ALREADY_ISSUED
    )


async def test_concurrent_issues_on_different_orders_cannot_exceed_the_daily_count(registry, ctx_for, store):
    orders = [f"ORD1{i:02d}" for i in range(8)]
    results = await asyncio.gather(
        *(
            registry.execute("issue_coupon", {"order_id": o, "amount": 1000}, ctx_for(call_id=f"cap_{o}"))
            for o in orders
        )
    )
    codes = Counter(r.code for r in results)
    assert codes == {ResultCode.ISSUED: 3, ResultCode.DAILY_LIMIT_REACHED: 5}
    assert await live_count(store, player_id="P100") == 3


async def test_concurrent_issues_cannot_exceed_the_daily_amount(registry, ctx_for, store):
    rules = CouponRules(daily_max_amount=25000, daily_max_count=10)
    orders = [f"ORD1{i:02d}" for i in range(6)]
    results = await asyncio.gather(
        *(
            registry.execute(
                "issue_coupon", {"order_id": o, "amount": 10000}, ctx_for(call_id=o, rules=rules)
            )
            for o in orders
        )
    )
    assert Counter(r.code for r in results)[ResultCode.ISSUED] == 2
    async with store.session() as s:
        total = (await s.execute(select(func.sum(Coupon.amount)))).scalar_one()
    assert total == 20000


async def test_the_same_call_retried_concurrently_issues_once(registry, ctx_for, store):
    ctx = ctx_for(call_id="retried")
    results = await asyncio.gather(
        *(registry.execute("issue_coupon", {"order_id": "ORD001", "amount": 5000}, ctx) for _ in range(10))
    )
    assert {r.code for r in results} == {ResultCode.ISSUED}
    assert len({r.data["coupon"]["code"] for r in results}) == 1
    assert await live_count(store) == 1


async def test_staff_and_bot_racing_on_one_order_leave_one_live_coupon(registry, ctx_for, store, rules):
    bot_calls = [
        registry.execute("issue_coupon", {"order_id": "ORD001", "amount": 5000}, ctx_for(call_id=f"b{i}"))
        for i in range(20)
    ]
    staff_calls = [
        staff_issue(
            store, rules, actor=STAFF, order_id="ORD001", amount=50000, reason="r", idempotency_key=f"s{i}"
        )
        for i in range(20)
    ]
    results = await asyncio.gather(*bot_calls, *staff_calls)
    assert Counter(r.code for r in results)[ResultCode.ISSUED] == 1
    assert await live_count(store, order_id="ORD001") == 1
