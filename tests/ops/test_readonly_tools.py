"""The worker's read-only tools: figures match the ledger, periods and statuses are checked in the tool,
players cannot use them, and the worker's registry holds no tool that writes."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from bot.store import Coupon
from bot.store.seed import DEFAULT_SEED, load_seed_file
from tests.support.ops import FIXED_NOW
from tools.base import Actor, ResultCode
from tools.ops_readonly import ops_worker_registry
from tools.registry import build_registry


def _seed_orders():
    return load_seed_file(DEFAULT_SEED).orders


async def test_order_stats_counts_every_status_like_the_seed(make_env) -> None:
    env = make_env()
    result = await env.tools.execute("order_stats", {}, env.ctx.for_call("c1"))
    expected = Counter(o.status for o in _seed_orders())
    assert result.code == ResultCode.OK
    assert {s: v["orders"] for s, v in result.data["by_status"].items()} == dict(expected)
    assert result.data["total_orders"] == len(_seed_orders())
    assert f"delayed 배송 지연: {expected['delayed']}건" in result.message


async def test_order_stats_for_one_status_gives_orders_players_and_amount(make_env) -> None:
    env = make_env()
    result = await env.tools.execute("order_stats", {"status": "delayed"}, env.ctx.for_call("c1"))
    delayed = [o for o in _seed_orders() if o.status == "delayed"]
    stats = result.data["by_status"]
    assert list(stats) == ["delayed"]
    assert stats["delayed"] == {
        "orders": len(delayed),
        "players": len({o.player_id for o in delayed}),
        "amount": sum(o.amount for o in delayed),
    }
    assert f"{sum(o.amount for o in delayed):,}원" in result.message


async def test_order_stats_period_counts_whole_days_in_the_service_time_zone(make_env) -> None:
    env = make_env()
    result = await env.tools.execute(
        "order_stats", {"since": "2026-11-02", "until": "2026-11-04"}, env.ctx.for_call("c1")
    )
    days = {"2026-11-02", "2026-11-03", "2026-11-04"}
    # The seed's timestamps are +09:00, the service zone: the local date is the written date.
    expected = [o for o in _seed_orders() if o.ordered_at.date().isoformat() in days]
    assert result.data["total_orders"] == len(expected) > 0


async def test_order_stats_rejects_a_bad_date_and_a_reversed_period_with_a_reason(make_env) -> None:
    env = make_env()
    bad = await env.tools.execute("order_stats", {"since": "last week"}, env.ctx.for_call("c1"))
    assert bad.code == ResultCode.ERROR and "'since'" in bad.message and "YYYY-MM-DD" in bad.message
    reversed_ = await env.tools.execute(
        "order_stats", {"since": "2026-11-05", "until": "2026-11-01"}, env.ctx.for_call("c2")
    )
    assert reversed_.code == ResultCode.ERROR and "'until'" in reversed_.message


async def test_order_stats_names_the_valid_statuses_for_an_unknown_one(make_env) -> None:
    env = make_env()
    result = await env.tools.execute("order_stats", {"status": "lost"}, env.ctx.for_call("c1"))
    assert result.code == ResultCode.ERROR
    assert "delayed" in result.message and "lost" in result.message


async def _add_coupon(store, order_id: str, player_id: str, amount: int, status: str, at: str) -> None:
    async with store.session() as s:
        s.add(
            Coupon(
                code=f"T-{order_id}-{status}",
                order_id=order_id,
                player_id=player_id,
                amount=amount,
                status=status,
                issued_by="staff:42",
                created_at=datetime.fromisoformat(at),
            )
        )
        await s.commit()


async def test_coupon_totals_split_issued_coupons_by_status_within_the_period(make_env, seeded_store) -> None:
    await _add_coupon(seeded_store, "ORD001", "P100", 20000, "active", "2026-11-20T10:00:00+09:00")
    await _add_coupon(seeded_store, "ORD003", "P200", 10000, "revoked", "2026-11-21T10:00:00+09:00")
    await _add_coupon(seeded_store, "ORD010", "P400", 5000, "active", "2026-10-01T10:00:00+09:00")
    env = make_env()
    result = await env.tools.execute(
        "coupon_totals", {"since": "2026-11-01", "until": "2026-11-30"}, env.ctx.for_call("c1")
    )
    assert result.code == ResultCode.OK
    assert result.data["issued"] == 2 and result.data["issued_amount"] == 30000
    assert result.data["by_status"] == {
        "active": {"count": 1, "amount": 20000},
        "revoked": {"count": 1, "amount": 10000},
    }
    assert "20,000원" in result.message and "1,000원~20,000원" in result.message  # the current limits too
    everything = await env.tools.execute("coupon_totals", {}, env.ctx.for_call("c2"))
    assert everything.data["issued"] == 3


async def test_players_cannot_use_the_ops_tools(make_env) -> None:
    env = make_env()
    player_ctx = env.ctx.__class__(
        actor=Actor(discord_id="9001", player_id="P100"),
        thread_id="console:p",
        run_id="r",
        store=env.ctx.store,
        clock=lambda: FIXED_NOW,
    )
    for name in ("order_stats", "coupon_totals"):
        result = await env.tools.execute(name, {}, player_ctx.for_call("c1"))
        assert result.code == ResultCode.DENIED


def test_the_worker_gets_only_read_only_tools() -> None:
    registry = ops_worker_registry(build_registry())
    assert set(registry.names) == {"order_stats", "coupon_totals", "lookup_order", "search_policy"}
    assert not any(registry.is_side_effect(n) for n in registry.names)
    assert "issue_coupon" not in registry and "escalate_to_staff" not in registry
