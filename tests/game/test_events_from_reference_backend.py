"""The reference backend's sender against the bot's endpoint: an order changed in the game reaches the
bot's orders table signed, and the backend's signing agrees with the bot's check byte for byte."""

from __future__ import annotations

import httpx

from bot.store import Order
from examples.game_backend.events import EventSender, sign
from tests.support.game_events import EVENTS, SECRET, order

ORDER = order("ORD001", updated_at="2026-11-02T11:00:00+09:00", status="delayed", player="P100")


async def _admin(backend, method: str, path: str, body: dict) -> dict:
    async with httpx.AsyncClient(
        base_url=backend.url, headers={"Authorization": f"Bearer {backend.token}"}, timeout=20
    ) as client:
        answer = await client.request(method, path, json=body)
        answer.raise_for_status()
        return answer.json()


async def test_an_order_changed_in_the_game_reaches_the_bot(events, game_backend):
    game_backend.load(players=[{"id": "P100", "name": "루나"}], orders=[ORDER])
    game_backend.app.state.events = EventSender(f"{events.url}{EVENTS}", SECRET)

    changed = await _admin(game_backend, "PUT", "/_admin/orders/ORD001", {"status": "refunded"})

    assert changed["bot"] == {"status_code": 200, "body": {"status": "applied"}}
    async with events.store.session() as s:
        stored = await s.get(Order, "ORD001")
    assert stored.status == "refunded"
    assert stored.updated_at.isoformat() == changed["order"]["updated_at"]


async def test_the_backend_signs_what_the_bot_checks(events):
    from bot.game.events import signature_header

    body = b'{"id":"e","type":"player.upserted","data":{"id":"P1","name":"n"}}'

    assert sign(SECRET.encode(), body, 1_765_000_000) == signature_header(
        SECRET.encode(), body, 1_765_000_000
    )


async def test_a_backend_with_the_wrong_secret_is_refused(events, game_backend):
    game_backend.load(players=[{"id": "P100", "name": "루나"}], orders=[ORDER])
    game_backend.app.state.events = EventSender(f"{events.url}{EVENTS}", "some-other-secret")

    changed = await _admin(game_backend, "PUT", "/_admin/orders/ORD001", {"status": "refunded"})

    assert changed["bot"] == {"status_code": 401, "body": {"error": "signature_mismatch"}}
    async with events.store.session() as s:
        assert (await s.get(Order, "ORD001")).status == "delayed"
    assert "some-other-secret" not in repr(game_backend.app.state.events)
