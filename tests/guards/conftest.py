"""Fixtures for the guard tests: a real SQLite file store with one player, two orders and one active coupon."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.store import Coupon, Order, Player, Store
from tests.support.context import NOW


@pytest.fixture
async def store(store: Store) -> Store:
    """The suite's SQLite store (tests/conftest.py) with one player, two orders and one active coupon."""
    async with store.session() as s:
        s.add(
            Player(id="P100", discord_id="9001", name="루나", email="luna@example.com", phone="010-1111-2222")
        )
        await s.flush()
        s.add_all(
            [
                Order(id="ORD001", player_id="P100", status="delayed", item="한정판 굿즈", amount=39000),
                Order(id="ORD005", player_id="P100", status="delayed", item="굿즈 2", amount=19000),
            ]
        )
        await s.flush()
        s.add(
            Coupon(
                code="ARCA-KEEP-2345",
                order_id="ORD005",
                player_id="P100",
                amount=10000,
                status="active",
                issued_by="staff:42",
                created_at=NOW,
                expires_at=NOW + timedelta(days=30),
            )
        )
        await s.commit()
    return store
