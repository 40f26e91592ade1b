"""The seam with the game's signed events: under ARCA_ORDER_SOURCE=http the web server's event receiver
is wired to the order source, so an `order.upserted` event drops the cached order and the next lookup
reads the backend again."""

from __future__ import annotations

from pathlib import Path

from bot.app import build_app
from bot.config import load_settings
from bot.serving.web.app import WebDeps, create_app
from bot.serving.web.startup import WebServer
from bot.store import Store
from bot.web_kit.identity import IdentityService
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.game.orders_world import load_world, wire_order
from tests.support.game_backend import GameBackend
from tests.support.game_events import SECRET, WEB_SECRET, EventsServer, event, stop_events_server


async def test_an_order_event_makes_the_next_lookup_read_the_backend(
    seeded_store: Store, game_backend: GameBackend, tmp_path: Path
) -> None:
    load_world(game_backend)
    settings = load_settings(
        ARCA_DATA_DIR=str(tmp_path),
        ARCA_WEB_SECRET=WEB_SECRET,
        ARCA_GAME_WEBHOOK_SECRET=SECRET,
        ARCA_ORDER_SOURCE="http",
        ARCA_GAME_API_URL=game_backend.url,
        ARCA_GAME_API_TOKEN=game_backend.token,
    )
    app = await build_app(
        settings, store=seeded_store, policy_index=EmptyPolicyIndex(), llm_factory=lambda: None
    )
    source = app.conversations.services.orders
    deps = WebDeps.from_settings(settings, app.conversations, IdentityService(WEB_SECRET))
    server = EventsServer(app, await WebServer(create_app(deps), "127.0.0.1", 0).start(), deps)
    try:
        assert (await source.order("ORD501")).status == "delayed"  # type: ignore[union-attr]  # now cached
        changed = wire_order("ORD501", status="delivered", updated_at="2026-03-03T09:00:00+09:00")
        game_backend.load(orders=[changed])
        assert (await source.order("ORD501")).status == "delayed"  # type: ignore[union-attr]  # still cached
        answer = await server.post(event("order.upserted", changed))
        assert answer.status_code == 200 and answer.json()["status"] == "applied"
        assert (await source.order("ORD501")).status == "delivered"  # type: ignore[union-attr]
    finally:
        await stop_events_server(server)
        await source.close()
