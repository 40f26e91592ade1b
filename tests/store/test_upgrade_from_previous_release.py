"""A database made by the previous release (schema version 8, git commit 15241a6, end of wave 3) is
upgraded in place to the current schema at the next start, on SQLite and PostgreSQL, with every row it
held still there and readable through the store; a read-only open refuses it and leaves it as it was.

The old database is a checked-in dump (tests/store/fixtures/release_v8_*.sql, made by
`build_release_v8.py` from an export of that commit), not a checkout of git at test time."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import func, inspect, select
from sqlalchemy.engine import make_url

from bot.store import SCHEMA_VERSION, Store, StoreError
from bot.store.audit_views import AuditQuery, audit_page
from bot.store.conversation_views import latest_messages, latest_threads
from bot.store.coupon_views import CouponQuery, coupons_with_orders
from bot.store.escalations import escalation_state
from bot.store.models import Base, Order, Player, SchemaMeta, StaffLink
from tests.support.services import asyncpg_dsn

FIXTURES = Path(__file__).parent / "fixtures"
PREVIOUS_RELEASE = 8


async def _load_dump(url: str, backend: str) -> None:
    """Restore the previous release's dump into the empty database `url`."""
    if backend == "sqlite":
        con = sqlite3.connect(make_url(url).database)
        try:
            con.executescript((FIXTURES / "release_v8_sqlite.sql").read_text(encoding="utf-8"))
        finally:
            con.close()
        return
    import asyncpg

    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        await conn.execute((FIXTURES / "release_v8_postgresql.sql").read_text(encoding="utf-8"))
    finally:
        await conn.close()


async def _version_and_tables(store: Store) -> tuple[str | None, set[str]]:
    async with store.engine.connect() as conn:
        tables = set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
        version = (
            await conn.execute(select(SchemaMeta.value).where(SchemaMeta.key == "schema_version"))
        ).scalar_one_or_none()
    return version, tables


async def test_previous_release_database_is_upgraded_with_its_rows(db_url: str, backend: str) -> None:
    await _load_dump(db_url, backend)
    assert SCHEMA_VERSION > PREVIOUS_RELEASE

    store = Store(db_url)
    await store.open(create=True)
    try:
        version, tables = await _version_and_tables(store)
        assert version == str(SCHEMA_VERSION)
        assert set(Base.metadata.tables) <= tables
        async with store.session() as s:
            assert (await s.execute(select(func.count()).select_from(Player))).scalar_one() == 9
            assert (await s.execute(select(func.count()).select_from(Order))).scalar_one() == 36
            link = await s.get(StaffLink, "a" * 64)
        assert link is not None and link.staff_name == "운영자"

        coupons = await coupons_with_orders(store, CouponQuery(player="P100"), limit=10)
        assert [(c.code, c.status, c.amount, o.id if o else None) for c, o in coupons] == [
            ("V8-KEEP-0001", "active", 3000, "ORD001")
        ]
        messages = await latest_messages(store, "web:v8-thread", 10)
        assert [(m.role, m.content) for m in messages] == [
            ("user", "쿠폰 언제 와요?"),
            ("assistant", "확인해 볼게요."),
        ]
        (thread,) = await latest_threads(store, limit=10, offset=0)
        assert (thread.thread_id, thread.handed_off, thread.escalated, thread.asker) == (
            "web:v8-thread",
            True,
            True,
            "player:P100",
        )
        state = await escalation_state(store, "web:v8-thread", ending_actions=("resume",), closed_action="x")
        assert state.open and state.latest == 1
        (audit,) = await audit_page(store, AuditQuery(action="escalate"), limit=10)
        assert (audit.target, audit.detail) == ("escalation:1", '{"summary": "쿠폰 미지급"}')

        # The tables the upgrade added take writes: the next release's features work on the old data.
        await store.audit(actor="test", action="upgrade.check", target="ORD001", code="OK")
        assert len(await audit_page(store, AuditQuery(action="upgrade.check"), limit=10)) == 1
    finally:
        await store.close()

    again = Store(db_url)
    await again.open(create=True)  # a second start finds nothing left to upgrade
    try:
        assert (await _version_and_tables(again))[0] == str(SCHEMA_VERSION)
    finally:
        await again.close()


async def _raw_state(url: str, backend: str) -> tuple[str, list[str]]:
    """The schema version and table names, read past the store (which would upgrade on open)."""
    if backend == "sqlite":
        con = sqlite3.connect(make_url(url).database)
        try:
            version = con.execute("SELECT value FROM schema_meta WHERE key = 'schema_version'").fetchone()[0]
            tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        finally:
            con.close()
        return version, sorted(tables)
    import asyncpg

    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        version = await conn.fetchval("SELECT value FROM schema_meta WHERE key = 'schema_version'")
        rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    finally:
        await conn.close()
    return version, sorted(r[0] for r in rows)


async def test_read_only_open_of_previous_release_refuses_and_changes_nothing(
    db_url: str, backend: str
) -> None:
    await _load_dump(db_url, backend)
    before = await _raw_state(db_url, backend)
    file_bytes = Path(make_url(db_url).database).read_bytes() if backend == "sqlite" else None
    assert before[0] == str(PREVIOUS_RELEASE)

    store = Store(db_url)
    with pytest.raises(StoreError, match=f"schema version {PREVIOUS_RELEASE} is older"):
        await store.open(create=False)
    await store.close()

    assert await _raw_state(db_url, backend) == before
    if file_bytes is not None:
        assert Path(make_url(db_url).database).read_bytes() == file_bytes
