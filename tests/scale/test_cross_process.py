"""Two bot processes, one PostgreSQL ledger: exactly-once issuance and the daily caps hold across OS
processes, not only across the tasks of one process."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter

import pytest
from sqlalchemy import func, select

from bot.store import Coupon, Store
from tests.support.scale import seed_ledger

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

# One "bot process": open the store, say ready, wait for the starting shot, then fire N concurrent
# issuances (each its own idempotency key, as separate tool calls would have) and print the codes.
WORKER = r"""
import asyncio, json, sys
from collections import Counter
from datetime import UTC, datetime
from bot.store import Store
from tools.base import Actor
from tools.coupon_rules import CouponRules
from tools.ledger import issue_for_player

url, name, calls, orders = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")
rules = CouponRules(daily_max_count=int(sys.argv[5]), daily_max_amount=10_000_000)
luna = Actor(discord_id="9001", player_id="P100")
now = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)

async def main():
    store = Store(url)
    await store.open()
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    results = await asyncio.gather(*(
        issue_for_player(store, rules, actor=luna, order_id=orders[i % len(orders)], amount=5000,
                         idempotency_key=f"{name}:call_{i}", thread_id=f"discord:{name}", now=now)
        for i in range(calls)
    ))
    await store.close()
    print(json.dumps(Counter(str(r.code) for r in results)), flush=True)

asyncio.run(main())
"""


async def race(url: str, *, calls: int, orders: list[str], daily_max_count: int) -> list[Counter[str]]:
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            WORKER,
            url,
            name,
            str(calls),
            ",".join(orders),
            str(daily_max_count),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        for name in ("shard0", "shard1")
    ]
    try:
        for p in procs:  # both connected before either fires
            line = await asyncio.wait_for(p.stdout.readline(), 60)
            assert line.strip() == b"ready", (line, await p.stderr.read())
        for p in procs:
            p.stdin.write(b"go\n")
            await p.stdin.drain()
        outputs = await asyncio.wait_for(asyncio.gather(*(p.communicate() for p in procs)), 120)
    finally:
        for p in procs:
            if p.returncode is None:
                p.kill()
    for p, (_out, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err.decode()
    return [Counter(json.loads(out.decode().strip().splitlines()[-1])) for out, _ in outputs]


async def live_coupons(url: str, **where: str) -> int:
    store = Store(url)
    await store.open()
    try:
        async with store.session() as s:
            q = select(func.count(Coupon.id)).where(Coupon.status.in_(("active", "pending")))
            for key, value in where.items():
                q = q.where(getattr(Coupon, key) == value)
            return (await s.execute(q)).scalar_one()
    finally:
        await store.close()


async def _seeded(url: str) -> None:
    store = Store(url)
    await store.open()
    await seed_ledger(store)
    await store.close()


@pytest.mark.slow
async def test_two_processes_racing_on_one_order_issue_exactly_one_coupon(pg_url: str) -> None:
    await _seeded(pg_url)
    first, second = await race(pg_url, calls=50, orders=["ORD001"], daily_max_count=3)
    total = first + second
    assert total == {"ISSUED": 1, "ALREADY_ISSUED": 99}
    assert await live_coupons(pg_url, order_id="ORD001") == 1


@pytest.mark.slow
async def test_two_processes_cannot_exceed_the_daily_count_together(pg_url: str) -> None:
    await _seeded(pg_url)
    orders = [f"ORD1{i:02d}" for i in range(10)]
    first, second = await race(pg_url, calls=20, orders=orders, daily_max_count=4)
    total = first + second
    assert total["ISSUED"] == 4
    assert total["ISSUED"] + total["DAILY_LIMIT_REACHED"] + total["ALREADY_ISSUED"] == 40
    assert await live_coupons(pg_url, player_id="P100") == 4
