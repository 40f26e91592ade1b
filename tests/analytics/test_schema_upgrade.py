"""Schema version 2 only adds the analytics tables: a wave-1 (version 1) database is upgraded in place
by the bot's normal start, keeps its rows, and is left untouched by a read-only check (`doctor`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import inspect, select
from sqlalchemy.ext.asyncio import create_async_engine

from bot.store import SCHEMA_VERSION, Player, Store, StoreError
from bot.store.models import UPGRADABLE_FROM, SchemaMeta
from bot.store.schema import _schema_for

NEW_TABLES = set(UPGRADABLE_FROM[1])


async def make_version_1(url: str) -> None:
    """What a wave-1 bot created: every table but the analytics ones, schema_version 1, one player."""
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        schema = _schema_for(conn.dialect.name)
        old = [t for name, t in schema.tables.items() if name not in NEW_TABLES]
        await conn.run_sync(lambda c: schema.create_all(c, tables=old))
        await conn.execute(SchemaMeta.__table__.insert().values(key="schema_version", value="1"))
        await conn.execute(Player.__table__.insert().values(id="P100", name="루나", locale="ko"))
    await engine.dispose()


async def tables_and_version(url: str) -> tuple[set[str], str]:
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        tables = set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
        version = (
            await conn.execute(select(SchemaMeta.value).where(SchemaMeta.key == "schema_version"))
        ).scalar_one()
    await engine.dispose()
    return tables, version


def test_version_2_adds_only_tables() -> None:
    assert (
        SCHEMA_VERSION == 12
    )  # v3: the staff console's tables, v4: its outbox, v5: incidents, v6: policy gaps, v7: incident
    # posts and deliveries, saved replies, desk claims, attachments, tickets; v8: incident notice answers;
    # v9: the game's events and link codes; v10: the outbox of grants into the game; v11: the order
    # facts each coupon was decided on; v12: refused link codes, counted across processes
    assert NEW_TABLES == {"runs", "run_tool_calls", "run_citations", "feedback", *UPGRADABLE_FROM[2]}


async def test_a_version_1_database_is_upgraded_and_keeps_its_rows(db_url: str) -> None:
    await make_version_1(db_url)
    assert NEW_TABLES.isdisjoint((await tables_and_version(db_url))[0])
    store = Store(db_url)
    await store.open()
    try:
        async with store.session() as s:
            assert (await s.get(Player, "P100")).name == "루나"
    finally:
        await store.close()
    tables, version = await tables_and_version(db_url)
    assert NEW_TABLES <= tables and version == str(SCHEMA_VERSION)
    again = Store(db_url)  # the upgraded database opens like any current one
    await again.open(create=False)
    await again.close()


async def test_a_read_only_check_refuses_to_upgrade_and_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "wave1.db"
    url = f"sqlite+aiosqlite:///{db}"
    await make_version_1(url)
    store = Store(url)
    with pytest.raises(
        StoreError, match=f"schema version 1 is older than {SCHEMA_VERSION}; the bot adds the missing tables"
    ):
        await store.open(create=False)
    tables, version = await tables_and_version(url)
    assert NEW_TABLES.isdisjoint(tables) and version == "1"


async def test_version_0_is_still_refused(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'v0.db'}"
    await make_version_1(url)
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.execute(SchemaMeta.__table__.update().values(value="0"))
    await engine.dispose()
    with pytest.raises(StoreError, match=f"older than {SCHEMA_VERSION} and no migration exists"):
        await Store(url).open()


async def test_a_version_3_database_gains_the_staff_outbox(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'v3.db'}"
    await make_version_1(url)
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        schema = _schema_for(conn.dialect.name)
        v3 = [schema.tables[name] for name in NEW_TABLES - set(UPGRADABLE_FROM[3])]
        await conn.run_sync(lambda c: schema.create_all(c, tables=v3))
        await conn.execute(SchemaMeta.__table__.update().values(value="3"))
    await engine.dispose()
    assert "staff_outbox" not in (await tables_and_version(url))[0]
    store = Store(url)
    await store.open()
    await store.close()
    tables, version = await tables_and_version(url)
    assert "staff_outbox" in tables and version == str(SCHEMA_VERSION)


async def test_a_version_4_database_gains_the_policy_gaps_and_keeps_its_rows(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'v4.db'}"
    await make_version_1(url)
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        schema = _schema_for(conn.dialect.name)
        v4 = [schema.tables[name] for name in NEW_TABLES - set(UPGRADABLE_FROM[4])]
        await conn.run_sync(lambda c: schema.create_all(c, tables=v4))
        await conn.execute(SchemaMeta.__table__.update().values(value="4"))
    await engine.dispose()
    assert "policy_gaps" not in (await tables_and_version(url))[0]
    store = Store(url)
    await store.open()
    try:
        async with store.session() as s:
            assert (await s.get(Player, "P100")).name == "루나"
    finally:
        await store.close()
    tables, version = await tables_and_version(url)
    assert "policy_gaps" in tables and version == str(SCHEMA_VERSION)
