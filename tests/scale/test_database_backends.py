"""The store on SQLite and on PostgreSQL: the same constraints are enforced by the database itself,
and the schema check refuses a database that is not ours, on both backends."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError

from bot.store import SCHEMA_VERSION, AuditEntry, Coupon, Store, StoreError, ThreadMessage
from bot.store.models import SchemaMeta
from tests.support.context import LUNA, NOW
from tests.support.services import asyncpg_dsn
from tools.base import ResultCode
from tools.coupon_rules import CouponRules
from tools.ledger import issue_for_player


def coupon(order_id: str = "ORD001", *, status: str = "active", key: str | None = None, code: str) -> Coupon:
    return Coupon(
        code=code,
        order_id=order_id,
        player_id="P100",
        amount=5000,
        status=status,
        issued_by="test",
        idempotency_key=key,
        created_at=NOW,
        expires_at=NOW + timedelta(days=30),
    )


async def test_database_refuses_a_second_active_coupon_for_one_order(store: Store) -> None:
    async with store.session() as s:
        s.add(coupon(code="ARCA-AAAA-0001"))
        await s.commit()
    async with store.session() as s:
        s.add(coupon(code="ARCA-AAAA-0002"))
        with pytest.raises(IntegrityError):
            await s.commit()


async def test_a_pending_coupon_also_holds_the_orders_one_slot(store: Store) -> None:
    async with store.session() as s:
        s.add(coupon(status="pending", code="ARCA-AAAA-0001"))
        await s.commit()
    async with store.session() as s:
        s.add(coupon(code="ARCA-AAAA-0002"))
        with pytest.raises(IntegrityError):
            await s.commit()


async def test_revoked_coupons_leave_the_slot_free(store: Store) -> None:
    async with store.session() as s:
        s.add_all([coupon(status="revoked", code=f"ARCA-AAAA-000{i}") for i in range(3)])
        s.add(coupon(code="ARCA-AAAA-0009"))
        await s.commit()
    async with store.session() as s:
        count = (
            await s.execute(select(func.count(Coupon.id)).where(Coupon.order_id == "ORD001"))
        ).scalar_one()
    assert count == 4


async def test_one_live_coupon_rule_holds_for_plain_sql_too(store: Store) -> None:
    # The rule is an index in the database: a statement that bypasses the ORM is refused as well.
    insert = text(
        "INSERT INTO coupons (code, order_id, player_id, amount, status, issued_by, created_at) "
        "VALUES (:code, 'ORD001', 'P100', 1000, 'active', 'sql', :at)"
    )
    async with store.engine.begin() as conn:
        await conn.execute(insert, {"code": "ARCA-SQL1-0001", "at": NOW})
    with pytest.raises(IntegrityError):
        async with store.engine.begin() as conn:
            await conn.execute(insert, {"code": "ARCA-SQL1-0002", "at": NOW})


async def test_idempotency_key_is_unique(store: Store) -> None:
    async with store.session() as s:
        s.add(coupon("ORD100", key="discord:1:r1:call_1", code="ARCA-KEY1-0001"))
        await s.commit()
    async with store.session() as s:
        s.add(coupon("ORD101", key="discord:1:r1:call_1", code="ARCA-KEY1-0002"))
        with pytest.raises(IntegrityError):
            await s.commit()


async def test_timestamps_and_json_round_trip_on_both_backends(store: Store) -> None:
    async with store.session() as s:
        s.add(
            ThreadMessage(
                thread_id="discord:1",
                role="assistant",
                content="안녕하세요",
                tool_calls=[{"id": "c1", "function": {"name": "lookup_order", "arguments": "{}"}}],
                meta={"usage": {"prompt_tokens": 3}},
                created_at=NOW,
            )
        )
        await s.commit()
    async with store.session() as s:
        row = (await s.execute(select(ThreadMessage))).scalar_one()
    assert row.created_at == NOW and row.created_at.utcoffset() == timedelta(0)
    assert row.tool_calls[0]["function"]["name"] == "lookup_order"
    assert row.meta == {"usage": {"prompt_tokens": 3}}


async def test_a_made_up_overlong_order_id_is_not_found_rather_than_a_database_error(store: Store) -> None:
    # SQLite ignores VARCHAR lengths; PostgreSQL would refuse the audit row unless the schema matches.
    result = await issue_for_player(
        store,
        CouponRules(),
        actor=LUNA,
        order_id="ORD" + "9" * 300,
        amount=5000,
        idempotency_key="discord:" + "1" * 150 + ":r1:call_long",
        now=NOW,
    )
    assert result.code == ResultCode.ORDER_NOT_FOUND
    audit = await store.recent_audit(1)
    assert audit[0].code == "ORDER_NOT_FOUND" and len(audit[0].target or "") == 303


async def _foreign_table(backend: str, url: str) -> list[str]:
    """Create someone else's table in the empty database; return the tables it then has."""
    if backend == "sqlite":
        con = sqlite3.connect(make_url(url).database)
        con.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total INTEGER)")
        con.commit()
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        con.close()
        return tables
    import asyncpg

    conn = await asyncpg.connect(asyncpg_dsn(url))
    try:
        await conn.execute("CREATE TABLE invoices (id integer PRIMARY KEY, total integer)")
        rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    finally:
        await conn.close()
    return [r["tablename"] for r in rows]


async def test_schema_check_refuses_a_foreign_database_and_leaves_it_alone(backend: str, db_url: str) -> None:
    before = await _foreign_table(backend, db_url)
    assert before == ["invoices"]
    with pytest.raises(StoreError, match="not Arca Support Bot's"):
        await Store(db_url).open()
    probe = Store(db_url)
    probe._engine = probe._make_engine()  # look without the schema check
    async with probe.engine.connect() as conn:
        from sqlalchemy import inspect

        tables = await conn.run_sync(lambda c: inspect(c).get_table_names())
    await probe.close()
    assert tables == ["invoices"]


async def test_schema_check_refuses_a_newer_schema_without_modifying_it(store: Store) -> None:
    async with store.session() as s:
        meta = await s.get(SchemaMeta, "schema_version")
        meta.value = str(SCHEMA_VERSION + 1)
        await s.commit()
    url = store.url
    await store.close()
    with pytest.raises(StoreError, match="newer"):
        await Store(url).open()
    again = Store(url)
    again._engine = again._make_engine()
    async with again.engine.connect() as conn:
        value = (await conn.execute(select(SchemaMeta.value))).scalar_one()
    await again.close()
    assert value == str(SCHEMA_VERSION + 1)


async def test_reopening_keeps_rows_and_the_audit_trail(store: Store) -> None:
    await store.audit(actor="player:P100", action="coupon.issue", target="ORD001", code="ISSUED")
    url = store.url
    await store.close()
    reopened = Store(url)
    await reopened.open()
    try:
        async with reopened.session() as s:
            actions = (await s.execute(select(AuditEntry.action))).scalars().all()
    finally:
        await reopened.close()
    assert actions == ["coupon.issue"]


@pytest.mark.postgres
async def test_postgres_creates_the_partial_unique_index_for_live_coupons(pg_url: str) -> None:
    store = Store(pg_url)
    await store.open()
    try:
        async with store.engine.connect() as conn:
            indexdef = (
                await conn.execute(
                    text("SELECT indexdef FROM pg_indexes WHERE indexname = 'uq_coupons_one_live_per_order'")
                )
            ).scalar_one()
    finally:
        await store.close()
    assert "UNIQUE" in indexdef and "WHERE" in indexdef and "'active'" in indexdef and "'pending'" in indexdef


async def test_unreachable_postgres_is_one_clear_line_without_the_password() -> None:
    url = "postgresql+asyncpg://arca:s3cret-pw@127.0.0.1:1/arca"
    with pytest.raises(StoreError) as info:
        await Store(url).open()
    message = str(info.value)
    assert "cannot open database" in message and "\n" not in message
    assert "s3cret-pw" not in message
