"""The small world the order-source tests load into the reference backend: Luna (P100) and Sol (P200)."""

from __future__ import annotations

from typing import Any

from bot.game.orders import HttpOrderSource
from bot.store import Store
from tests.support.game_backend import GameBackend

PLAYERS = [{"id": "P100", "name": "루나", "locale": "ko"}, {"id": "P200", "name": "솔", "locale": "ko"}]


def wire_order(oid: str, player: str = "P100", status: str = "delayed", **more: Any) -> dict[str, Any]:
    return {
        "id": oid,
        "player_id": player,
        "status": status,
        "item": "한정판 굿즈",
        "amount": 39000,
        "currency": "KRW",
        "ordered_at": "2026-03-01T10:00:00+09:00",
        "updated_at": "2026-03-01T11:00:00+09:00",
        **more,
    }


ORDERS = [
    wire_order("ORD501"),
    wire_order("ORD502", status="shipping"),
    wire_order("ORD503", player="P200"),
]


def load_world(backend: GameBackend) -> GameBackend:
    backend.load(players=PLAYERS, orders=ORDERS)
    return backend


def http_source(backend: GameBackend, store: Store, **kwargs: Any) -> HttpOrderSource:
    """The http source over `backend`, mirroring into `store`, with short waits for tests."""
    kwargs.setdefault("timeout_s", 1.0)
    kwargs.setdefault("backoff_s", 0.01)
    kwargs.setdefault("retries", 1)
    return HttpOrderSource(base_url=backend.url, token=backend.token, mirror=store.orders.mirror, **kwargs)
