"""An incident's scope with ARCA_ORDER_SOURCE=http: its orders are read fresh from the game's backend
(its paged order search, or each listed player's orders) before the preview, so the bulk grant
compensates the backend's orders; a backend that cannot answer gives no preview at all."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from bot.game.orders import HttpOrderSource, SourceUnavailable
from bot.incidents import Limits, preview, run_compensation
from bot.incidents.declare import declare
from bot.store import Coupon, Store
from bot.store.incident_grant import Plan
from bot.store.incident_scope import IncidentScope
from tests.game.orders_world import PLAYERS, http_source, wire_order
from tests.support.game_backend import GameBackend

NOW = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)


@pytest.fixture
async def source(game_backend: GameBackend, store: Store) -> AsyncIterator[HttpOrderSource]:
    delayed = [wire_order(f"ORD6{i:02d}", player=("P100", "P200")[i % 2]) for i in range(12)]
    game_backend.load(players=PLAYERS, orders=[*delayed, wire_order("ORD699", status="delivered")])
    src = http_source(game_backend, store)
    try:
        yield src
    finally:
        await src.close()


async def _incident(store: Store, scope: IncidentScope):  # type: ignore[no-untyped-def]
    return await declare(
        store,
        title="배송 지연",
        notice_ko="지연",
        notice_en="delay",
        scope=scope,
        start=NOW,
        end=None,
        actor="staff:42",
    )


async def test_the_scope_is_read_from_the_backends_order_search(
    store: Store, source: HttpOrderSource
) -> None:
    incident = await _incident(store, IncidentScope("orders", statuses=("delayed",)))
    plan = Plan(incident.id, "order", 5000)
    shown = await preview(store, incident, plan, Limits(), now=NOW, orders=source)
    assert shown.orders == 12
    await store.incidents.set_plan(incident.id, plan, state="approved", actor="staff:42")
    result = await run_compensation(store, incident.id, actor="staff:42", clock=lambda: NOW)
    assert result.ok and result.issued == 12
    async with store.session() as s:
        compensated = set((await s.execute(select(Coupon.order_id))).scalars())
    assert compensated == {f"ORD6{i:02d}" for i in range(12)}


async def test_a_players_scope_reads_each_listed_players_orders(
    store: Store, source: HttpOrderSource
) -> None:
    incident = await _incident(store, IncidentScope("players", statuses=("delayed",), player_ids=("P200",)))
    shown = await preview(store, incident, Plan(incident.id, "order", 5000), Limits(), now=NOW, orders=source)
    assert shown.orders == 6


async def test_no_preview_while_the_backend_cannot_answer(
    store: Store, game_backend: GameBackend, source: HttpOrderSource
) -> None:
    incident = await _incident(store, IncidentScope("orders", statuses=("delayed",)))
    game_backend.faults(error_rate=1.0)
    with pytest.raises(SourceUnavailable):
        await preview(store, incident, Plan(incident.id, "order", 5000), Limits(), now=NOW, orders=source)
