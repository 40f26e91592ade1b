"""The ledger's plain-asyncpg path on PostgreSQL (`Store.direct_pg`): the same facts and rows as the
SQLAlchemy session path, and a taken unique key is a lost race with nothing written."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from bot.store import AuditEntry, Coupon, Store
from tools import coupon_write as write
from tools.ledger import CouponRules, issue_for_player
from tools.local_time import day_bounds
from tools.results import ResultCode

from .conftest import LUNA, NOW, SOL, seed_ledger

pytestmark = pytest.mark.postgres


@pytest.fixture
async def pg_store(pg_url: str) -> AsyncIterator[Store]:
    store = Store(pg_url)
    await store.open()
    await seed_ledger(store)
    try:
        yield store
    finally:
        await store.close()


async def _counts(store: Store) -> tuple[int, int]:
    async with store.session() as s:
        coupons = (await s.execute(select(func.count(Coupon.id)))).scalar_one()
        audits = (await s.execute(select(func.count(AuditEntry.id)))).scalar_one()
    return coupons, audits


async def test_both_postgres_paths_write_the_same_rows_and_read_the_same_facts(pg_store: Store) -> None:
    assert pg_store.direct_pg is not None
    rules = CouponRules()
    luna = await issue_for_player(
        pg_store, rules, actor=LUNA, order_id="ORD001", amount=5000, idempotency_key="k1", now=NOW
    )
    direct_pg = pg_store.direct_pg
    pg_store.direct_pg = None  # the SQLAlchemy session path on the same database
    try:
        sol = await issue_for_player(pg_store, rules, actor=SOL, order_id="ORD003", amount=5000, now=NOW)
    finally:
        pg_store.direct_pg = direct_pg
    assert (luna.code, sol.code) == (ResultCode.ISSUED, ResultCode.ISSUED)

    day = day_bounds(NOW, "Asia/Seoul")
    async with direct_pg.transaction() as conn:
        by_pg = await write.read_facts_pg(conn, "ORD001", "k1", day)
    async with pg_store.session() as session:
        by_session = await write.read_facts(session, "ORD001", "k1", day)
    assert by_pg == by_session
    assert by_pg.key_coupon == by_pg.live_coupon and by_pg.live_coupon.code == luna.data["coupon"]["code"]
    assert by_pg.live_coupon.created_at == NOW and by_pg.live_coupon.expires_at == NOW + timedelta(days=30)
    assert by_pg.day == write.DailyUsage(count=1, amount=5000)

    async with pg_store.session() as s:
        coupons = list((await s.execute(select(Coupon).order_by(Coupon.id))).scalars())
        audits = list((await s.execute(select(AuditEntry).order_by(AuditEntry.id))).scalars())
    assert [(c.order_id, c.player_id, c.status, c.created_at) for c in coupons] == [
        ("ORD001", "P100", "active", NOW),
        ("ORD003", "P200", "active", NOW),
    ]
    assert [(a.action, a.target, a.code) for a in audits] == [
        ("coupon.issue", "ORD001", "ISSUED"),
        ("coupon.issue", "ORD003", "ISSUED"),
    ]
    assert coupons[0].code in audits[0].detail and coupons[1].code in audits[1].detail


async def test_a_taken_key_on_the_asyncpg_path_is_a_lost_race_that_writes_nothing(pg_store: Store) -> None:
    first = await issue_for_player(
        pg_store, CouponRules(), actor=LUNA, order_id="ORD001", amount=5000, idempotency_key="same", now=NOW
    )
    assert first.code == ResultCode.ISSUED
    before = await _counts(pg_store)
    clash = write.CouponRow(
        id=None,
        code="ARCA-CCCC-CCCC",
        order_id="ORD100",
        player_id="P100",
        amount=1000,
        status="active",
        reason=None,
        issued_by="player:P100",
        idempotency_key="same",
        created_at=NOW,
        expires_at=NOW,
        revoked_at=None,
    )
    audit = {
        "at": NOW,
        "actor": "player:P100",
        "thread_id": None,
        "action": "coupon.issue",
        "target": "ORD100",
        "code": "ISSUED",
        "detail": "{}",
    }
    assert pg_store.direct_pg is not None
    with pytest.raises(write.RaceLost):
        async with pg_store.direct_pg.transaction() as conn:
            await write.insert_pg(conn, clash, audit)
    assert await _counts(pg_store) == before
    # The pool's connection is usable again after the failed transaction.
    again = await issue_for_player(
        pg_store, CouponRules(), actor=LUNA, order_id="ORD001", amount=5000, idempotency_key="same", now=NOW
    )
    assert again.code == ResultCode.ISSUED and again.data["replayed"] is True
