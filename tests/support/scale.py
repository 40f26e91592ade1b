"""The scale tests' ledger seed: two linked players, a delayed and a delivered order, ten more delayed ones."""

from __future__ import annotations

from bot.store import Order, Player, Store


async def seed_ledger(store: Store) -> None:
    """Two linked players; P100 has a delayed ORD001, a delivered ORD002 and ten delayed ORD100-ORD109."""
    async with store.session() as s:
        s.add_all(
            [
                Player(id="P100", discord_id="9001", name="루나"),
                Player(id="P200", discord_id="9002", name="솔"),
            ]
        )
        await s.flush()
        orders = [
            Order(id="ORD001", player_id="P100", status="delayed", item="한정판 굿즈", amount=39000),
            Order(id="ORD002", player_id="P100", status="delivered", item="시즌 패스", amount=15000),
            Order(id="ORD003", player_id="P200", status="delayed", item="펫 상자", amount=9900),
        ]
        orders += [
            Order(id=f"ORD1{i:02d}", player_id="P100", status="delayed", item=f"아이템 {i}", amount=10000)
            for i in range(10)
        ]
        s.add_all(orders)
        await s.commit()
