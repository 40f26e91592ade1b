"""The http order source against the reference backend over loopback: each fault of a network and each
kind of bad data is answered honestly (`SourceUnavailable`, or the bad order left out), never trusted."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from bot.game.orders import HttpOrderSource, SourceUnavailable
from tests.support.game_backend import GameBackend

PLAYER = {"id": "P100", "name": "Luna", "locale": "ko"}
OTHER = {"id": "P200", "name": "Sol", "locale": "ko"}


def order(oid: str = "ORD001", player: str = "P100", status: str = "delayed", **more: Any) -> dict[str, Any]:
    return {
        "id": oid,
        "player_id": player,
        "status": status,
        "item": "한정판 굿즈",
        "amount": 39000,
        "currency": "KRW",
        "ordered_at": "2026-03-01T10:00:00+09:00",
        "updated_at": "2026-03-02T09:00:00+09:00",
        **more,
    }


@pytest.fixture
def world(game_backend: GameBackend) -> GameBackend:
    game_backend.load(players=[PLAYER, OTHER], orders=[order(), order("ORD002", status="shipping")])
    return game_backend


def source(backend: GameBackend, **kwargs: Any) -> HttpOrderSource:
    kwargs.setdefault("timeout_s", 1.0)
    kwargs.setdefault("backoff_s", 0.01)
    kwargs.setdefault("breaker_recovery_s", 0.3)
    return HttpOrderSource(base_url=backend.url, token=backend.token, **kwargs)


async def test_an_order_is_read_validated_and_cached(world: GameBackend) -> None:
    src = source(world)
    try:
        got = await src.order("ORD001")
        assert got is not None and (got.player_id, got.status, got.amount, got.source) == (
            "P100",
            "delayed",
            39000,
            "http",
        )
        assert got.read_at is not None
        world.faults(fail_next=5)  # a cached lookup does not call the backend at all
        assert await src.order("ORD001") == got
    finally:
        await src.close()


async def test_a_missing_order_is_none_not_an_error(world: GameBackend) -> None:
    src = source(world)
    try:
        assert await src.order("ORD999") is None
    finally:
        await src.close()


async def test_a_timeout_is_retried_then_unavailable(world: GameBackend) -> None:
    world.faults(timeout_next=2, hang_s=2)
    src = source(world, timeout_s=0.2, retries=1)
    try:
        with pytest.raises(SourceUnavailable, match="no answer within"):
            await src.order("ORD001", fresh=True)  # both attempts hang
        assert (await src.order("ORD001", fresh=True)) is not None
    finally:
        await src.close()


async def test_one_timeout_is_absorbed_by_a_retry(world: GameBackend) -> None:
    world.faults(timeout_next=1, hang_s=2)
    src = source(world, timeout_s=0.3, retries=1)
    try:
        assert (await src.order("ORD001", fresh=True)) is not None
    finally:
        await src.close()


async def test_a_5xx_is_retried_and_the_read_recovers(world: GameBackend) -> None:
    world.faults(fail_next=2)
    src = source(world, retries=2)
    try:
        got = await src.order("ORD001", fresh=True)
        assert got is not None and got.id == "ORD001"
    finally:
        await src.close()


async def test_a_429_honours_a_short_retry_after(world: GameBackend) -> None:
    world.faults(rate_limit_next=1, retry_after_s=1)
    src = source(world, retries=1, timeout_s=2.0)
    loop = asyncio.get_running_loop()
    try:
        start = loop.time()
        got = await src.order("ORD001", fresh=True)
        assert got is not None and loop.time() - start >= 0.9  # it waited as asked, then read
    finally:
        await src.close()


async def test_a_429_asking_longer_than_a_timeout_gives_up_at_once(world: GameBackend) -> None:
    world.faults(rate_limit_next=3, retry_after_s=30)
    src = source(world, retries=2, timeout_s=0.5)
    loop = asyncio.get_running_loop()
    try:
        start = loop.time()
        with pytest.raises(SourceUnavailable, match="HTTP 429"):
            await src.order("ORD001", fresh=True)
        assert loop.time() - start < 2
    finally:
        await src.close()


async def test_the_breaker_opens_fails_fast_then_one_probe_recovers(world: GameBackend) -> None:
    src = source(world, retries=0, breaker_failures=3, breaker_recovery_s=0.3)
    try:
        world.faults(fail_next=3)
        for _ in range(3):
            with pytest.raises(SourceUnavailable, match="HTTP 503"):
                await src.order("ORD001", fresh=True)
        assert src.breaker.state == "open"
        world.faults()  # the backend is back, but the circuit is open: no request is sent
        with pytest.raises(SourceUnavailable, match="circuit open"):
            await src.order("ORD001", fresh=True)
        await asyncio.sleep(0.35)
        assert src.breaker.state == "half_open"
        got = await src.order("ORD001", fresh=True)  # the probe succeeds and closes the circuit
        assert got is not None and src.breaker.state == "closed"
    finally:
        await src.close()


async def test_a_failed_probe_opens_the_circuit_again(world: GameBackend) -> None:
    src = source(world, retries=0, breaker_failures=2, breaker_recovery_s=0.3)
    try:
        world.faults(fail_next=3)
        for _ in range(2):
            with pytest.raises(SourceUnavailable):
                await src.order("ORD001", fresh=True)
        await asyncio.sleep(0.35)
        with pytest.raises(SourceUnavailable, match="HTTP 503"):  # the probe fails
            await src.order("ORD001", fresh=True)
        assert src.breaker.state == "open"
    finally:
        await src.close()


async def test_connection_refused_is_unavailable(world: GameBackend) -> None:
    src = HttpOrderSource(base_url="http://127.0.0.1:9", token="t", retries=1, backoff_s=0.01)
    try:
        with pytest.raises(SourceUnavailable, match="connection failed"):
            await src.order("ORD001")
    finally:
        await src.close()


async def test_a_wrong_token_is_reported_without_the_token(
    world: GameBackend, caplog: pytest.LogCaptureFixture
) -> None:
    src = HttpOrderSource(base_url=world.url, token="wrong-secret-token")
    try:
        with caplog.at_level(logging.INFO), pytest.raises(SourceUnavailable, match="401"):
            await src.order("ORD001")
    finally:
        await src.close()
    assert "wrong-secret-token" not in caplog.text and world.token not in caplog.text


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("{not json", "malformed JSON"),
        (json.dumps(order(status="lost")), "status"),
        (json.dumps({k: v for k, v in order().items() if k != "amount"}), "amount"),
        (json.dumps(order(amount="39000")), "amount"),
        (json.dumps(order(ordered_at="2026-03-01 10:00")), "ordered_at"),
        (json.dumps(order("ORD777")), "another order"),
        (json.dumps([order()]), "JSON object"),
        (json.dumps(order(item="x" * 2_200_000)), "limit"),
    ],
    ids=[
        "malformed",
        "unknown-status",
        "missing-field",
        "amount-as-text",
        "naive-time",
        "other-order",
        "array",
        "2MB",
    ],
)
async def test_bad_data_for_an_order_is_refused_with_a_logged_reason(
    world: GameBackend, caplog: pytest.LogCaptureFixture, body: str, why: str
) -> None:
    world.faults(body_next=body)
    src = source(world)
    try:
        with caplog.at_level(logging.WARNING), pytest.raises(SourceUnavailable, match="bad data"):
            await src.order("ORD001", fresh=True)
        assert why in caplog.text
        assert world.token not in caplog.text
        assert src.breaker.state == "closed"  # the backend answered: not a reason to stop calling it
    finally:
        await src.close()


async def test_a_players_list_leaves_out_bad_and_foreign_orders(
    world: GameBackend, caplog: pytest.LogCaptureFixture
) -> None:
    mixed = {"orders": [order(), order("ORD003", player="P200"), order("ORD004", status="lost")]}
    world.faults(body_next=json.dumps(mixed))
    src = source(world)
    try:
        with caplog.at_level(logging.WARNING):
            page = await src.player_orders("P100", limit=10)
        assert [o.id for o in page.orders] == ["ORD001"]
        assert "another player" in caplog.text and "status" in caplog.text
    finally:
        await src.close()


async def test_a_players_list_filters_by_status_here(world: GameBackend) -> None:
    src = source(world)
    try:
        page = await src.player_orders("P100", limit=10, status="shipping")
        assert [o.id for o in page.orders] == ["ORD002"] and page.total == 1
    finally:
        await src.close()


async def test_forget_drops_the_cached_order_and_lists_holding_it(world: GameBackend) -> None:
    src = source(world)
    try:
        await src.order("ORD001")
        await src.player_orders("P100", limit=10)
        world.load(orders=[order(status="delivered", updated_at="2026-03-03T09:00:00+09:00")])
        assert (await src.order("ORD001")).status == "delayed"  # type: ignore[union-attr]  # cached
        await src.forget("ORD001")
        assert (await src.order("ORD001")).status == "delivered"  # type: ignore[union-attr]
        statuses = {o.id: o.status for o in (await src.player_orders("P100", limit=10)).orders}
        assert statuses["ORD001"] == "delivered"
    finally:
        await src.close()


async def test_a_fresh_read_bypasses_the_cache(world: GameBackend) -> None:
    src = source(world)
    try:
        await src.order("ORD001")
        world.load(orders=[order(status="delivered", updated_at="2026-03-03T09:00:00+09:00")])
        assert (await src.order("ORD001", fresh=True)).status == "delivered"  # type: ignore[union-attr]
    finally:
        await src.close()


async def test_the_order_search_pages_through_a_status(world: GameBackend) -> None:
    world.load(orders=[order(f"ORD1{i:02d}", status="delayed") for i in range(12)])
    src = source(world)
    try:
        import bot.game.orders.http as http_source

        pages = []
        old = http_source.SEARCH_PAGE
        http_source.SEARCH_PAGE = 5
        try:
            async for page in src.search(statuses=("delayed",)):
                pages.append([o.id for o in page])
        finally:
            http_source.SEARCH_PAGE = old
        assert len(pages) >= 3 and sum(len(p) for p in pages) == 13
    finally:
        await src.close()


async def test_while_the_probe_is_out_other_reads_fail_fast(world: GameBackend) -> None:
    src = source(world, retries=0, breaker_failures=2, breaker_recovery_s=0.3)
    try:
        world.faults(fail_next=2)
        for _ in range(2):
            with pytest.raises(SourceUnavailable):
                await src.order("ORD001", fresh=True)
        await asyncio.sleep(0.35)
        world.faults(latency_ms=300)  # the probe takes a while: the others must not pile onto the backend
        probe = asyncio.create_task(src.order("ORD001", fresh=True))
        await asyncio.sleep(0.05)
        with pytest.raises(SourceUnavailable, match="circuit open"):
            await src.order("ORD002", fresh=True)
        assert (await probe) is not None and src.breaker.state == "closed"
    finally:
        await src.close()
