"""`python -m examples.game_backend.demo_world [SEED]`: load the demo players and orders (default
data/demo_seed.yaml) into the reference backend's database (GAME_BACKEND_DB), as `scripts/run --game`
does, so the bot reads the same demo world from the game's side."""

from __future__ import annotations

import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from examples.game_backend.storage import GameStore

DEFAULT_SEED = Path(__file__).resolve().parents[2] / "data" / "demo_seed.yaml"


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


def load_demo_world(store: GameStore, seed: Path = DEFAULT_SEED) -> tuple[int, int]:
    """Upsert the seed's players and orders (an order's `updated_at` is its `ordered_at`)."""
    data = yaml.safe_load(seed.read_text(encoding="utf-8")) or {}
    players = data.get("players") or []
    for p in players:
        store.upsert_player({"id": p["id"], "name": p["name"], "locale": p.get("locale", "ko")})
    orders = [
        {
            "id": o["id"],
            "player_id": o["player_id"],
            "status": o["status"],
            "item": o["item"],
            "amount": int(o["amount"]),
            "currency": o.get("currency", "KRW"),
            "ordered_at": _iso(o["ordered_at"]),
            "updated_at": _iso(o.get("updated_at") or o["ordered_at"]),
        }
        for o in data.get("orders") or []
    ]
    store.upsert_orders(orders)
    return len(players), len(orders)


def main() -> None:
    seed = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SEED
    db = os.environ.get("GAME_BACKEND_DB", "game_backend.db")
    players, orders = load_demo_world(GameStore(db), seed)
    print(f"reference backend {db}: {players} players, {orders} orders from {seed.name}")


if __name__ == "__main__":
    main()
