"""The issuance's statements (`tools.coupon_write`): the loop-thread SQLite path and the session path read
the same facts, write the same rows, and both turn a unique-index hit into a lost race with nothing written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from bot.store import AuditEntry, Coupon, Store
from tools import coupon_write as write
from tools.ledger import CouponRules, issue_for_player
from tools.local_time import day_bounds
from tools.results import ResultCode

from .conftest import LUNA, NOW, SOL

SEOUL = "Asia/Seoul"


def _row(code: str, order_id: str, created_at: datetime, *, key: str | None = None) -> write.CouponRow:
    return write.CouponRow(
        id=None,
        code=code,
        order_id=order_id,
        player_id="P100",
        amount=2000,
        status="active",
        reason=None,
        issued_by="staff:42",
        idempotency_key=key,
        created_at=created_at,
        expires_at=created_at + timedelta(days=30),
        revoked_at=None,
    )


def _audit(target: str) -> dict:
    return {
        "at": NOW,
        "actor": "staff:42",
        "thread_id": None,
        "action": "coupon.staff_issue",
        "target": target,
        "code": "ISSUED",
        "detail": "{}",
    }


async def _facts_both_ways(store: Store, order_id: str, key: str | None) -> tuple:
    day = day_bounds(NOW, SEOUL)
    direct = store.direct
    assert direct is not None
    by_direct = await direct.read(lambda conn: write.read_facts_direct(direct, conn, order_id, key, day))
    async with store.session() as session:
        by_session = await write.read_facts(session, order_id, key, day)
    return by_direct, by_session


async def _count(store: Store, model) -> int:
    async with store.session() as s:
        return (await s.execute(select(func.count(model.id)))).scalar_one()


async def test_both_paths_read_the_same_facts_including_the_seoul_day_edges(store: Store) -> None:
    midnight = datetime(2026, 3, 1, 15, 0, tzinfo=UTC)  # 2026-03-02 00:00 in Seoul: counts for NOW's day
    direct = store.direct
    assert direct is not None

    def unit(conn):
        write.insert_direct(
            direct, conn, _row("ARCA-AAAA-AAAA", "ORD100", midnight, key="k1"), _audit("ORD100")
        )
        before = midnight - timedelta(microseconds=1)  # the day before in Seoul: does not count
        write.insert_direct(direct, conn, _row("ARCA-BBBB-BBBB", "ORD101", before), _audit("ORD101"))

    await direct.write(unit)
    by_direct, by_session = await _facts_both_ways(store, "ORD100", "k1")
    assert by_direct == by_session
    assert by_direct.order_player_id == "P100" and by_direct.order_status == "delayed"
    assert by_direct.day == write.DailyUsage(count=1, amount=2000)
    assert by_direct.key_coupon == by_direct.live_coupon
    assert by_direct.live_coupon.code == "ARCA-AAAA-AAAA"
    assert (
        by_direct.live_coupon.created_at == midnight and by_direct.live_coupon.created_at.tzinfo is not None
    )
    assert by_direct.live_coupon.expires_at == midnight + timedelta(days=30)

    missing_direct, missing_session = await _facts_both_ways(store, "NOPE", None)
    assert missing_direct == missing_session
    assert (missing_direct.order_player_id, missing_direct.key_coupon, missing_direct.live_coupon) == (
        None,
        None,
        None,
    )
    assert missing_direct.day == write.DailyUsage(count=0, amount=0)


async def test_both_paths_write_rows_the_orm_reads_back_identically(store: Store) -> None:
    rules = CouponRules()
    luna = await issue_for_player(store, rules, actor=LUNA, order_id="ORD001", amount=5000, now=NOW)
    direct = store.direct
    store.direct = None  # the session path (PostgreSQL, in-memory SQLite) on the same file
    try:
        sol = await issue_for_player(store, rules, actor=SOL, order_id="ORD003", amount=5000, now=NOW)
    finally:
        store.direct = direct
    assert (luna.code, sol.code) == (ResultCode.ISSUED, ResultCode.ISSUED)
    async with store.session() as s:
        coupons = list((await s.execute(select(Coupon).order_by(Coupon.id))).scalars())
        audits = list((await s.execute(select(AuditEntry).order_by(AuditEntry.id))).scalars())
    assert [(c.order_id, c.player_id, c.status, c.amount) for c in coupons] == [
        ("ORD001", "P100", "active", 5000),
        ("ORD003", "P200", "active", 5000),
    ]
    for coupon, result in zip(coupons, (luna, sol), strict=True):
        assert coupon.created_at == NOW and coupon.expires_at == NOW + timedelta(days=30)
        assert coupon.code == result.data["coupon"]["code"] and coupon.revoked_at is None
    assert [(a.action, a.target, a.code) for a in audits] == [
        ("coupon.issue", "ORD001", "ISSUED"),
        ("coupon.issue", "ORD003", "ISSUED"),
    ]
    assert all(a.at.tzinfo is not None and coupons[i].code in a.detail for i, a in enumerate(audits))


@pytest.mark.parametrize("path", ["direct", "session"])
async def test_a_taken_idempotency_key_is_a_lost_race_and_writes_nothing(store: Store, path: str) -> None:
    first = await issue_for_player(
        store, CouponRules(), actor=LUNA, order_id="ORD001", amount=5000, idempotency_key="same", now=NOW
    )
    assert first.code == ResultCode.ISSUED
    coupons, audits = await _count(store, Coupon), await _count(store, AuditEntry)
    clash = _row("ARCA-CCCC-CCCC", "ORD100", NOW, key="same")
    with pytest.raises(write.RaceLost):
        if path == "direct":
            direct = store.direct
            assert direct is not None
            await direct.write(lambda conn: write.insert_direct(direct, conn, clash, _audit("ORD100")))
        else:
            async with store.session() as session:
                await write.insert(session, clash, _audit("ORD100"))
                await session.commit()
    assert (await _count(store, Coupon), await _count(store, AuditEntry)) == (coupons, audits)
