"""The order tools, the coupon ledger and the staff commands read orders through the configured source:
with the studio's backend they answer from it, say SOURCE_UNAVAILABLE honestly when it is down, never
issue a coupon on an order not read fresh, and keep the order facts each coupon was decided on."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import select

from bot.game.orders import HttpOrderSource
from bot.store import AuditEntry, Coupon, GameOrderFacts, Store
from tests.game.orders_world import http_source, load_world, wire_order
from tests.support.context import LUNA, STAFF, make_ctx
from tests.support.game_backend import GameBackend
from tools.base import ResultCode, ToolServices
from tools.coupons import IssueCouponArgs, issue_coupon
from tools.orders import ListMyOrdersArgs, LookupOrderArgs, list_my_orders, lookup_order
from tools.registry import build_registry

REGISTRY = build_registry()


@pytest.fixture
async def source(game_backend: GameBackend, store: Store) -> AsyncIterator[HttpOrderSource]:
    load_world(game_backend)
    src = http_source(game_backend, store)
    try:
        yield src
    finally:
        await src.close()


def ctx(store: Store, source: Any, actor: Any = LUNA, locale: str = "ko") -> Any:
    return make_ctx(actor, store=store, locale=locale, services=ToolServices(orders=source), new_call=True)


async def _run(tool: Any, args: Any, context: Any) -> Any:
    return await REGISTRY.execute(tool.name, args.model_dump(exclude_none=True), context)


async def _coupons(store: Store) -> list[Coupon]:
    async with store.session() as s:
        return list((await s.execute(select(Coupon))).scalars())


async def test_lookup_reads_the_backend_and_hides_another_players_order(
    store: Store, source: HttpOrderSource
) -> None:
    mine = await _run(lookup_order, LookupOrderArgs(order_id="ord501"), ctx(store, source))
    assert mine.code == ResultCode.OK and mine.data["order"]["status"] == "delayed"
    theirs = await _run(lookup_order, LookupOrderArgs(order_id="ORD503"), ctx(store, source))
    missing = await _run(lookup_order, LookupOrderArgs(order_id="ORD999"), ctx(store, source))
    assert theirs.code == missing.code == ResultCode.ORDER_NOT_FOUND
    assert theirs.message.replace("ORD503", "X") == missing.message.replace("ORD999", "X")


async def test_list_my_orders_reads_the_backend(store: Store, source: HttpOrderSource) -> None:
    result = await _run(list_my_orders, ListMyOrdersArgs(), ctx(store, source))
    assert result.code == ResultCode.OK
    assert {o["id"] for o in result.data["orders"]} == {"ORD501", "ORD502"}


@pytest.mark.parametrize(
    ("locale", "sentence"),
    [("ko", "주문 정보를 지금 확인할 수 없어요"), ("en", "can't check order information")],
)
async def test_a_down_backend_is_source_unavailable_in_the_players_language(
    store: Store, game_backend: GameBackend, source: HttpOrderSource, locale: str, sentence: str
) -> None:
    game_backend.faults(error_rate=1.0)
    for tool, args in (
        (lookup_order, LookupOrderArgs(order_id="ORD501")),
        (list_my_orders, ListMyOrdersArgs()),
    ):
        result = await _run(tool, args, ctx(store, source, locale=locale))
        assert result.code == ResultCode.SOURCE_UNAVAILABLE and not result.ok
        assert sentence in result.message
        assert ("담당자" if locale == "ko" else "a person") in result.message


async def test_a_coupon_is_issued_on_a_fresh_read_and_keeps_its_facts(
    store: Store, source: HttpOrderSource
) -> None:
    result = await _run(issue_coupon, IssueCouponArgs(order_id="ORD501", amount=5000), ctx(store, source))
    assert result.code == ResultCode.ISSUED
    [coupon] = await _coupons(store)
    assert (coupon.order_id, coupon.player_id) == ("ORD501", "P100")  # its rows exist: the mirror
    async with store.session() as s:
        facts = (await s.execute(select(GameOrderFacts))).scalar_one()
        audit = (await s.execute(select(AuditEntry).where(AuditEntry.action == "coupon.issue"))).scalar_one()
    assert (facts.coupon_code, facts.status, facts.amount, facts.source) == (
        coupon.code,
        "delayed",
        39000,
        "http",
    )
    assert facts.read_at is not None
    kept = json.loads(audit.detail)["order_facts"]
    assert (kept["id"], kept["player_id"], kept["status"], kept["source"]) == (
        "ORD501",
        "P100",
        "delayed",
        "http",
    )


async def test_eligibility_bypasses_the_cache(
    store: Store, game_backend: GameBackend, source: HttpOrderSource
) -> None:
    looked = await _run(lookup_order, LookupOrderArgs(order_id="ORD501"), ctx(store, source))
    assert looked.data["order"]["status"] == "delayed"  # now cached as delayed
    game_backend.load(
        orders=[wire_order("ORD501", status="delivered", updated_at="2026-03-02T09:00:00+09:00")]
    )
    again = await _run(lookup_order, LookupOrderArgs(order_id="ORD501"), ctx(store, source))
    assert again.data["order"]["status"] == "delayed"  # a lookup may read the cache
    result = await _run(issue_coupon, IssueCouponArgs(order_id="ORD501", amount=5000), ctx(store, source))
    assert result.code == ResultCode.NOT_ELIGIBLE_STATUS  # the issuance read it fresh
    assert await _coupons(store) == []


async def test_no_coupon_while_the_backend_is_down_even_with_the_order_cached(
    store: Store, game_backend: GameBackend, source: HttpOrderSource
) -> None:
    await _run(lookup_order, LookupOrderArgs(order_id="ORD501"), ctx(store, source))  # cached, mirrored
    game_backend.faults(error_rate=1.0)
    result = await _run(issue_coupon, IssueCouponArgs(order_id="ORD501", amount=5000), ctx(store, source))
    assert result.code == ResultCode.SOURCE_UNAVAILABLE
    assert "쿠폰은 발급되지 않았어요" in result.message and "담당자" in result.message
    assert await _coupons(store) == []
    async with store.session() as s:
        audit = (await s.execute(select(AuditEntry).where(AuditEntry.code == "SOURCE_UNAVAILABLE"))).scalars()
        assert any("HTTP 503" in (a.detail or "") for a in audit)
    game_backend.faults()  # the backend is back: the same request goes through
    recovered = await _run(issue_coupon, IssueCouponArgs(order_id="ORD501", amount=5000), ctx(store, source))
    assert recovered.code == ResultCode.ISSUED


async def test_another_players_order_is_not_found_for_a_coupon(store: Store, source: HttpOrderSource) -> None:
    result = await _run(issue_coupon, IssueCouponArgs(order_id="ORD503", amount=5000), ctx(store, source))
    assert result.code == ResultCode.ORDER_NOT_FOUND and await _coupons(store) == []


async def test_staff_lookup_sees_any_players_order(store: Store, source: HttpOrderSource) -> None:
    result = await _run(lookup_order, LookupOrderArgs(order_id="ORD503"), ctx(store, source, actor=STAFF))
    assert result.code == ResultCode.OK and result.data["order"]["player_id"] == "P200"


async def test_the_builtin_source_keeps_the_facts_of_its_coupons(seeded_store: Store) -> None:
    result = await _run(
        issue_coupon, IssueCouponArgs(order_id="ORD001", amount=5000), ctx(seeded_store, None)
    )
    assert result.code == ResultCode.ISSUED
    async with seeded_store.session() as s:
        facts = (await s.execute(select(GameOrderFacts))).scalar_one()
    assert (facts.order_id, facts.player_id, facts.status, facts.source) == (
        "ORD001",
        "P100",
        "delayed",
        "builtin",
    )
    assert facts.amount == 39000


async def test_order_statistics_count_the_backends_orders(store: Store, source: HttpOrderSource) -> None:
    from tools.ops_readonly import ops_worker_registry

    context = make_ctx(STAFF, store=store, services=ToolServices(orders=source), new_call=True)
    result = await ops_worker_registry().execute("order_stats", {}, context)  # every status, all time
    assert result.code == ResultCode.OK
    assert result.data["by_status"]["delayed"] == {"orders": 2, "players": 2, "amount": 78000}
    assert result.data["by_status"]["shipping"]["orders"] == 1
