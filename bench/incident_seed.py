"""The affected orders of a bulk-compensation incident, seeded in one place for the benchmark
(`bench/incident_bulk.py`) and the tests (`tests/scale/test_incident_compensation.py`, the Discord and
console card tests): `n_orders` delayed orders, `per_player` of them for each player."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.store import Order, Player, Store

SEEDED_AT = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)


def player_id(i: int) -> str:
    return f"P{i:05d}"


def order_id(i: int) -> str:
    return f"O{i:06d}"


async def seed_orders(
    store: Store, n_orders: int, per_player: int = 5, *, at: datetime = SEEDED_AT, status: str = "delayed"
) -> None:
    """`n_orders` orders in `status` (O000000…), `per_player` for each player (P00000…), in one transaction."""
    players = [
        {"id": player_id(i), "name": f"p{i}", "locale": "ko"} for i in range(-(-n_orders // per_player))
    ]
    orders = [
        {
            "id": order_id(i),
            "player_id": player_id(i // per_player),
            "status": status,
            "item": "굿즈",
            "amount": 10000,
            "currency": "KRW",
            "ordered_at": at,
            "updated_at": at,
        }
        for i in range(n_orders)
    ]
    await store.insert_rows([(Player.__table__, players), (Order.__table__, orders)])
