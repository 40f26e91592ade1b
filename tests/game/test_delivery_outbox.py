"""The outbox of grants (bot/store/game_deliveries.py): with `ARCA_COUPON_DELIVERY=game` every coupon issued —
by the bot, by staff, on approval, by an incident's bulk grant — writes its grant job in the ledger's own
transaction, a revoke of a granted coupon its revoke job; with `none` nothing is written."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from bench.incident_seed import seed_orders
from bot.incidents import parse_scope, run_compensation
from bot.store import Coupon, Store
from bot.store.game_deliveries import GameDelivery
from bot.store.incident_grant import Plan
from tests.support.context import LUNA, NOW, STAFF
from tests.support.store import sqlite_url
from tests.support.tools import seed
from tools.coupon_rules import CouponRules
from tools.coupon_staff import approve, reject, revoke
from tools.ledger import issue_for_player, staff_issue


async def _store(tmp_path: Path, *, game: bool) -> Store:
    store = Store(sqlite_url(tmp_path / "arca.db"), game_delivery=game)
    await store.open()
    await seed(store)
    return store


async def _jobs(store: Store) -> list[tuple[str, str, str, str | None, int]]:
    async with store.session() as s:
        rows = await s.execute(
            select(
                GameDelivery.grant_id,
                GameDelivery.kind,
                GameDelivery.player_id,
                GameDelivery.order_id,
                GameDelivery.amount,
            ).order_by(GameDelivery.id)
        )
        return [tuple(r) for r in rows.all()]


async def test_a_coupon_the_bot_issues_writes_one_grant_job_keyed_by_its_code(tmp_path: Path) -> None:
    store = await _store(tmp_path, game=True)
    try:
        result = await issue_for_player(
            store, CouponRules(), actor=LUNA, order_id="ORD001", amount=5000, idempotency_key="k1", now=NOW
        )
        again = await issue_for_player(
            store, CouponRules(), actor=LUNA, order_id="ORD001", amount=5000, idempotency_key="k1", now=NOW
        )
        code = result.data["coupon"]["code"]
        assert again.data["coupon"]["code"] == code
        assert await _jobs(store) == [(code, "grant", "P100", "ORD001", 5000)]
    finally:
        await store.close()


async def test_with_delivery_none_nothing_is_written(tmp_path: Path) -> None:
    store = await _store(tmp_path, game=False)
    try:
        await issue_for_player(
            store, CouponRules(), actor=LUNA, order_id="ORD001", amount=5000, idempotency_key="k1", now=NOW
        )
        assert (await revoke(store, actor=STAFF, order_id="ORD001")).ok
        assert await _jobs(store) == []
    finally:
        await store.close()


async def test_staff_issue_approve_and_revoke_write_their_jobs(tmp_path: Path) -> None:
    store = await _store(tmp_path, game=True)
    rules = CouponRules(approval_threshold=10_000)
    try:
        staff = await staff_issue(
            store,
            rules,
            actor=STAFF,
            order_id="ORD002",
            amount=7000,
            reason="VIP",
            idempotency_key="s1",
            now=NOW,
        )
        waiting = await issue_for_player(
            store, rules, actor=LUNA, order_id="ORD001", amount=15000, idempotency_key="k2", now=NOW
        )
        assert waiting.data["coupon"]["status"] == "pending"
        staff_code, pending_code = staff.data["coupon"]["code"], waiting.data["coupon"]["code"]
        assert [j[0] for j in await _jobs(store)] == [staff_code]  # a pending coupon is not granted yet

        assert (await approve(store, actor=STAFF, order_id="ORD001")).ok
        assert (await revoke(store, actor=STAFF, order_id="ORD001")).ok
        assert (await revoke(store, actor=STAFF, order_id="ORD001")).ok is False  # nothing live any more
        assert await _jobs(store) == [
            (staff_code, "grant", "P100", "ORD002", 7000),
            (pending_code, "grant", "P100", "ORD001", 15000),
            (pending_code, "revoke", "P100", "ORD001", 15000),
        ]
    finally:
        await store.close()


async def test_a_rejected_request_and_a_coupon_issued_before_delivery_was_on_send_nothing(
    tmp_path: Path,
) -> None:
    store = await _store(tmp_path, game=False)
    rules = CouponRules(approval_threshold=10_000)
    try:
        await staff_issue(
            store,
            rules,
            actor=STAFF,
            order_id="ORD002",
            amount=7000,
            reason=None,
            idempotency_key="s1",
            now=NOW,
        )
        store.game_deliveries.enabled = True
        await issue_for_player(
            store, rules, actor=LUNA, order_id="ORD001", amount=15000, idempotency_key="k2", now=NOW
        )
        assert (await reject(store, actor=STAFF, order_id="ORD001")).ok
        assert (await revoke(store, actor=STAFF, order_id="ORD002")).ok  # never granted: nothing to take back
        assert await _jobs(store) == []
    finally:
        await store.close()


async def test_an_incidents_bulk_grant_writes_one_job_per_coupon(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "arca.db"), game_delivery=True)
    await store.open()
    try:
        await seed_orders(store, 1200, per_player=3)
        incident = await store.incidents.open(
            title="배송 지연",
            notice_ko="지연",
            notice_en="late",
            scope=parse_scope("status=delayed"),
            actor="staff:42",
            now=NOW,
        )
        await store.incidents.set_plan(
            incident.id, Plan(incident.id, "order", 3000), state="approved", actor="staff:42"
        )
        result = await run_compensation(
            store, incident.id, actor="staff:42", clock=lambda: NOW, batch_size=500
        )
        assert result.issued == 1200
        async with store.session() as s:
            codes = set((await s.execute(select(Coupon.code))).scalars())
        jobs = await _jobs(store)
        assert len(jobs) == 1200 and {j[0] for j in jobs} == codes
        assert {j[1] for j in jobs} == {"grant"} and {j[4] for j in jobs} == {3000}
    finally:
        await store.close()
