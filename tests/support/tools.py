"""The tool tests' seed: two players (one with contact details) and their orders."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.store import Order, Player, Store


async def seed(store: Store) -> None:
    async with store.session() as s:
        s.add_all(
            [
                Player(
                    id="P100", discord_id="9001", name="루나", email="luna@example.com", phone="010-1111-2222"
                ),
                Player(id="P200", discord_id="9002", name="솔"),
            ]
        )
        await s.flush()
        s.add_all(
            [
                Order(
                    id="ORD001",
                    player_id="P100",
                    status="delayed",
                    item="한정판 굿즈",
                    amount=39000,
                    ordered_at=datetime(2026, 2, 20, 3, 0, tzinfo=UTC),
                ),
                Order(
                    id="ORD002",
                    player_id="P100",
                    status="delivered",
                    item="시즌 패스",
                    amount=15000,
                    ordered_at=datetime(2026, 2, 21, 3, 0, tzinfo=UTC),
                ),
                Order(
                    id="ORD003",
                    player_id="P200",
                    status="delayed",
                    item="펫 상자",
                    amount=9900,
                    ordered_at=datetime(2026, 2, 22, 3, 0, tzinfo=UTC),
                ),
            ]
            + [
                Order(
                    id=f"ORD1{i:02d}",
                    player_id="P100",
                    status="delayed",
                    item=f"아이템 {i}",
                    amount=10000,
                    ordered_at=datetime(2026, 2, 1, i, 0, tzinfo=UTC),
                )
                for i in range(10)
            ]
        )
        await s.commit()
