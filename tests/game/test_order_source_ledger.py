"""The ledger's copy of the order facts on both databases: a version-10 database gains `game_order_facts`
and keeps its coupons; a coupon issued on an http read is valid and auditable with no other copy."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import create_async_engine

from bot.store import SCHEMA_VERSION, Coupon, GameOrderFacts, Store
from bot.store.models import UPGRADABLE_FROM, SchemaMeta
from bot.store.seed import DEFAULT_SEED, apply_seed, load_seed_file
from tests.game.orders_world import http_source, load_world
from tests.support.context import LUNA, make_ctx
from tests.support.game_backend import GameBackend
from tools.base import ToolServices
from tools.registry import build_registry


async def test_a_version_10_database_gains_the_order_facts_and_keeps_its_coupons(db_url: str) -> None:
    store = Store(db_url)
    await store.open()
    await apply_seed(store, load_seed_file(DEFAULT_SEED))
    ctx = make_ctx(LUNA, store=store, new_call=True)
    assert (await build_registry().execute("issue_coupon", {"order_id": "ORD001", "amount": 10000}, ctx)).ok
    await store.close()
    engine = create_async_engine(db_url)  # back to version 10: the table did not exist then
    async with engine.begin() as conn:
        await conn.execute(text("DROP TABLE game_order_facts"))
        await conn.execute(SchemaMeta.__table__.update().values(value="10"))
    await engine.dispose()

    again = Store(db_url)
    await again.open()
    try:
        async with again.session() as s:
            assert [c.order_id for c in (await s.execute(select(Coupon))).scalars()] == ["ORD001"]
            assert (await s.execute(select(GameOrderFacts))).scalars().all() == []
            version = (await s.execute(select(SchemaMeta.value))).scalar_one()
        assert version == str(SCHEMA_VERSION)
        ctx = make_ctx(LUNA, store=again, new_call=True)
        issued = await build_registry().execute("issue_coupon", {"order_id": "ORD024", "amount": 10000}, ctx)
        async with again.session() as s:
            kept = (await s.execute(select(GameOrderFacts.order_id))).scalars().all()
        assert issued.code == "ISSUED" and kept == ["ORD024"]
    finally:
        await again.close()


@pytest.fixture
async def fresh_store(db_url: str) -> AsyncIterator[Store]:
    store = Store(db_url)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


async def test_a_coupon_on_an_http_read_is_valid_on_both_databases(
    fresh_store: Store, game_backend: GameBackend
) -> None:
    load_world(game_backend)
    src = http_source(game_backend, fresh_store)
    try:
        ctx = make_ctx(LUNA, store=fresh_store, services=ToolServices(orders=src), new_call=True)
        result = await build_registry().execute("issue_coupon", {"order_id": "ORD501", "amount": 10000}, ctx)
    finally:
        await src.close()
    assert result.code == "ISSUED"
    async with fresh_store.session() as s:
        facts = (await s.execute(select(GameOrderFacts))).scalar_one()
    assert (facts.order_id, facts.player_id, facts.status, facts.amount, facts.source) == (
        "ORD501",
        "P100",
        "delayed",
        39000,
        "http",
    )


@pytest.mark.parametrize("version", [8, 9, 10])
async def test_each_recent_version_gains_the_tables_it_lacks(tmp_path, version: int) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    store = Store(url)
    await store.open()
    await store.close()
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        for table in UPGRADABLE_FROM[version]:
            await conn.execute(text(f"DROP TABLE {table}"))
        await conn.execute(SchemaMeta.__table__.update().values(value=str(version)))
    await engine.dispose()
    again = Store(url)
    await again.open()
    try:
        async with again.session() as s:
            assert (await s.execute(select(SchemaMeta.value))).scalar_one() == str(SCHEMA_VERSION)
            assert (await s.execute(select(GameOrderFacts))).scalars().all() == []
    finally:
        await again.close()
