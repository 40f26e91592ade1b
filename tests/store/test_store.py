from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from bot.store import SCHEMA_VERSION, AuditEntry, Coupon, Order, Player, Store, StoreError
from tests.support.store import sqlite_url


async def _coupon(
    store: Store, *, order_id: str = "ORD001", status: str = "active", code: str, key: str | None = None
):
    async with store.session() as s, s.begin():
        s.add(
            Coupon(
                code=code,
                order_id=order_id,
                player_id="P100",
                amount=5000,
                status=status,
                issued_by="test",
                idempotency_key=key,
            )
        )


async def test_database_refuses_a_second_active_coupon_for_one_order(seeded_store: Store) -> None:
    await _coupon(seeded_store, code="C1")
    with pytest.raises(IntegrityError):
        await _coupon(seeded_store, code="C2")


async def test_pending_coupon_also_blocks_a_second_live_coupon(seeded_store: Store) -> None:
    await _coupon(seeded_store, code="C1", status="pending")
    with pytest.raises(IntegrityError):
        await _coupon(seeded_store, code="C2", status="active")


async def test_revoked_coupons_do_not_block_a_new_active_one(seeded_store: Store) -> None:
    await _coupon(seeded_store, code="C1")
    async with seeded_store.session() as s, s.begin():
        await s.execute(update(Coupon).where(Coupon.code == "C1").values(status="revoked"))
    await _coupon(seeded_store, code="C2")
    async with seeded_store.session() as s:
        statuses = sorted((await s.execute(select(Coupon.status))).scalars())
    assert statuses == ["active", "revoked"]


async def test_one_active_coupon_rule_holds_for_raw_sql_too(seeded_store: Store, tmp_path: Path) -> None:
    # The constraint lives in the database, not in Python: a plain sqlite3 connection cannot bypass it.
    await _coupon(seeded_store, code="C1")
    await seeded_store.close()
    con = sqlite3.connect(tmp_path / "arca.db")
    with pytest.raises(sqlite3.IntegrityError):
        con.execute(
            "INSERT INTO coupons (code, order_id, player_id, amount, status, issued_by, created_at)"
            " VALUES ('C9', 'ORD001', 'P100', 1000, 'active', 'sql', '2026-01-01')"
        )
    con.close()


async def test_idempotency_key_is_unique(seeded_store: Store) -> None:
    await _coupon(seeded_store, code="C1", order_id="ORD001", key="t:r:c1")
    with pytest.raises(IntegrityError):
        await _coupon(seeded_store, code="C2", order_id="ORD003", key="t:r:c1")


async def test_timestamps_come_back_as_aware_utc(seeded_store: Store) -> None:
    async with seeded_store.session() as s:
        order = (await s.execute(select(Order).where(Order.id == "ORD001"))).scalar_one()
    assert order.ordered_at.tzinfo is not None
    assert order.ordered_at == datetime(2026, 11, 2, 2, 0, tzinfo=UTC)


async def test_audit_rows_are_appended(store: Store) -> None:
    await store.audit(
        actor="staff:42", action="coupon.revoke", target="ORD001", code="OK", detail={"a": "쿠폰"}
    )
    rows = await store.recent_audit(5)
    assert [(r.actor, r.action, r.code) for r in rows] == [("staff:42", "coupon.revoke", "OK")]
    assert "쿠폰" in (rows[0].detail or "")


async def test_schema_check_refuses_a_foreign_database_and_leaves_it_alone(tmp_path: Path) -> None:
    path = tmp_path / "foreign.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    con.commit()
    con.close()
    store = Store(sqlite_url(path))
    with pytest.raises(StoreError, match="not Arca"):
        await store.open()
    con = sqlite3.connect(path)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    con.close()
    assert tables == ["customers"]


async def test_schema_check_refuses_a_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    store = Store(sqlite_url(path))
    await store.open()
    await store.close()
    con = sqlite3.connect(path)
    con.execute("UPDATE schema_meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="newer"):
        await Store(sqlite_url(path)).open()
    con = sqlite3.connect(path)
    version = con.execute("SELECT value FROM schema_meta").fetchone()[0]
    con.close()
    assert version == str(SCHEMA_VERSION + 1)


async def test_reopening_our_own_database_keeps_its_rows(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "a.db")
    store = Store(url)
    await store.open()
    assert await store.recent_audit() == []  # a new database has no audit rows
    async with store.session() as s, s.begin():
        s.add(Player(id="P1", discord_id="1", name="하나"))
    await store.audit(actor="staff:42", action="coupon.revoke", target="ORD001", code="OK")
    await store.close()
    again = Store(url)
    await again.open()
    async with again.session() as s:
        assert (await s.execute(select(Player.name))).scalars().all() == ["하나"]
    entries = await again.recent_audit()
    assert all(isinstance(e, AuditEntry) for e in entries)
    assert [(e.actor, e.action, e.target, e.code) for e in entries] == [
        ("staff:42", "coupon.revoke", "ORD001", "OK")
    ]
    await again.close()


async def test_unreachable_database_url_is_a_clear_store_error() -> None:
    with pytest.raises(StoreError, match="cannot open database"):
        await Store("nosuchdriver+async://u:secret@h/db").open()


async def test_store_error_never_shows_the_password() -> None:
    with pytest.raises(StoreError) as info:
        await Store("nosuchdriver+async://u:hunter2@h/db").open()
    assert "hunter2" not in str(info.value)
