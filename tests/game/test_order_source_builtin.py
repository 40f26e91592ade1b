"""The builtin order source reads the embedded table; the mirror of fresh http reads keeps it in step
(newer wins, an unknown owner gets a stub player, so a coupon's foreign keys always hold)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from sqlalchemy import select

from bot.game.orders import BuiltinOrderSource, make_order_source
from bot.store import OrderRecord, Player, Store


async def test_the_builtin_source_reads_the_seeded_table(seeded_store: Store) -> None:
    src = BuiltinOrderSource(seeded_store)
    got = await src.order("ORD001", fresh=True)
    assert got is not None and (got.player_id, got.status, got.source) == ("P100", "delayed", "builtin")
    assert await src.order("ORD999") is None
    page = await src.player_orders("P100", limit=2)
    assert len(page.orders) == 2 and page.total is not None and page.total > 2
    delayed = await src.player_orders("P100", limit=10, status="delayed")
    assert {o.status for o in delayed.orders} == {"delayed"}


def _record(status: str, updated: datetime, player: str = "P900") -> OrderRecord:
    when = datetime(2026, 3, 1, tzinfo=UTC)
    return OrderRecord("ORD900", player, status, "굿즈", 1000, "KRW", when, updated, "http", updated)


async def test_the_mirror_keeps_the_newest_read_and_stubs_an_unknown_player(store: Store) -> None:
    first = _record("delayed", datetime(2026, 3, 2, tzinfo=UTC))
    await store.orders.mirror([first])
    async with store.session() as s:
        assert (await s.execute(select(Player.id).where(Player.id == "P900"))).scalar_one() == "P900"
    await store.orders.mirror(
        [replace(first, status="delivered", updated_at=datetime(2026, 3, 3, tzinfo=UTC))]
    )
    await store.orders.mirror([first])  # an older read arriving late changes nothing
    got = await store.orders.get("ORD900")
    assert got is not None and got.status == "delivered"


async def test_the_configured_source_is_builtin_by_default(store: Store) -> None:
    from bot.config import Settings

    assert make_order_source(Settings(), store).name == "builtin"


async def test_the_mirror_upserts_on_both_databases(db_url: str) -> None:
    store = Store(db_url)
    await store.open()
    try:
        first = _record("delayed", datetime(2026, 3, 2, tzinfo=UTC))
        many = [replace(first, id=f"ORD{i:05d}", player_id=f"P{i % 700:04d}") for i in range(1200)]
        await store.orders.mirror(many)  # more rows than one statement may bind on SQLite
        await store.orders.mirror([first, replace(first, id="ORD901", status="shipping")])
        newer = replace(first, status="delivered", updated_at=datetime(2026, 3, 3, tzinfo=UTC))
        await store.orders.mirror([newer])
        await store.orders.mirror([first])
        got = await store.orders.get("ORD900")
        assert got is not None and got.status == "delivered"
        assert (await store.orders.get("ORD01199")) is not None
    finally:
        await store.close()
