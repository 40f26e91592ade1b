"""An incident's bulk compensation, on SQLite and PostgreSQL: exactly one coupon per affected order
through a kill -9 and a restart, two processes and two approvals at once, a budget that stops issuance
at the budget exactly, and exclusions kept with their reason."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from bench.incident_seed import seed_orders
from bot.incidents import Limits, parse_scope, preview, run_compensation
from bot.store import Coupon, Order, Store
from bot.store.incident_grant import Plan
from bot.store.incident_scope import IncidentScope
from bot.store.models import Run, RunToolCall, StaffOutbox
from tests.eventually import eventually
from tests.support.context import NOW

ROOT = Path(__file__).resolve().parents[2]
STAFF = "staff:42"


async def approved(
    store: Store, plan_text: tuple[int, str | None, int | None, int | None], scope: str = "status=delayed"
) -> int:
    amount, per, budget, cap = plan_text
    incident = await store.incidents.open(
        title="배송 지연",
        notice_ko="택배사 사정으로 배송이 지연되고 있습니다.",
        notice_en="Deliveries are late.",
        scope=parse_scope(scope),
        actor=STAFF,
        now=NOW,
    )
    plan = Plan(incident.id, per or "order", amount, budget, cap)
    await store.incidents.set_plan(incident.id, plan, state="approved", actor=STAFF)
    return incident.id


async def incident_coupons(store: Store, incident_id: int) -> list[tuple[str, int]]:
    async with store.session() as s:
        rows = await s.execute(
            select(Coupon.order_id, Coupon.amount).where(
                Coupon.idempotency_key.like(f"incident:{incident_id}:%")
            )
        )
        return list(rows.all())


def worker(url: str, incident_id: int, batch: int = 100, pause: float = 0.0) -> asyncio.Future:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.scale.incident_worker",
        url,
        str(incident_id),
        str(batch),
        str(pause),
        stdout=asyncio.subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )


@pytest.fixture
async def empty_store(db_url: str):
    st = Store(db_url)
    await st.open()
    try:
        yield st
    finally:
        await st.close()


@pytest.mark.slow
async def test_kill_9_mid_run_then_restart_issues_exactly_one_coupon_per_order(empty_store, db_url):
    await seed_orders(empty_store, 10_000)
    incident_id = await approved(empty_store, (5000, "order", None, None))
    first = await worker(db_url, incident_id, batch=100, pause=0.02)

    async def partly() -> bool:
        return len(await incident_coupons(empty_store, incident_id)) >= 1500

    await eventually(partly, within=120, what="the first process issued some coupons")
    first.send_signal(signal.SIGKILL)
    assert await first.wait() == -signal.SIGKILL
    mid = len(await incident_coupons(empty_store, incident_id))
    assert 0 < mid < 10_000

    second = await worker(db_url, incident_id, batch=250)
    out, _ = await asyncio.wait_for(second.communicate(), 300)
    assert second.returncode == 0
    assert out.decode().strip() == f"done {10_000 - mid}"
    coupons = await incident_coupons(empty_store, incident_id)
    assert len(coupons) == 10_000
    assert len({order for order, _ in coupons}) == 10_000
    assert (await empty_store.incidents.grant_summary(incident_id)).spent == 10_000 * 5000


@pytest.mark.slow
async def _askers(store: Store, n: int) -> None:
    """`n` players (P00000…) who asked about the incident: a run each that called `incident_status`."""
    runs = [
        {
            "run_id": f"ask-{i}",
            "thread_id": f"discord:7700{i}",
            "player": f"player:P{i:05d}",
            "started_at": NOW + timedelta(minutes=1),
            "answered_at": NOW + timedelta(minutes=1),
            "locale": "en" if i % 2 else "ko",
        }
        for i in range(n)
    ]
    calls = [
        {
            "run_id": f"ask-{i}",
            "at": NOW + timedelta(minutes=1),
            "tool": "incident_status",
            "code": "OK",
            "ok": True,
        }
        for i in range(n)
    ]
    await store.insert_rows([(Run.__table__, runs), (RunToolCall.__table__, calls)])


async def _told(store: Store) -> dict[str, list[str]]:
    async with store.session() as s:
        rows = (await s.execute(select(StaffOutbox.thread_id, StaffOutbox.text))).all()
    out: dict[str, list[str]] = {}
    for thread, text in rows:
        out.setdefault(thread, []).append(text)
    return out


@pytest.mark.slow
async def test_two_processes_and_two_approvals_at_once_issue_each_coupon_once(empty_store, db_url):
    await seed_orders(empty_store, 2_000)
    incident_id = await approved(empty_store, (3000, "order", None, None))
    await _askers(empty_store, 10)
    procs = [await worker(db_url, incident_id, batch=50) for _ in range(2)]
    in_process = [
        run_compensation(empty_store, incident_id, actor=STAFF, clock=lambda: NOW, batch_size=70)
        for _ in range(2)
    ]
    results = await asyncio.gather(*in_process)
    outs = [await asyncio.wait_for(p.communicate(), 300) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    issued = sum(int(o.decode().split()[1]) for o, _ in outs) + sum(r.issued for r in results)
    coupons = await incident_coupons(empty_store, incident_id)
    assert issued == len(coupons) == 2_000
    assert len({order for order, _ in coupons}) == 2_000
    # Every run (four, in three processes) tells the askers at its end: each conversation once, in its language.
    told = await _told(empty_store)
    assert sorted(told) == [f"discord:7700{i}" for i in range(10)]
    assert all(len(texts) == 1 and texts[0].count("ARCA-") == 5 for texts in told.values())
    assert "3,000 KRW coupon" in told["discord:77001"][0] and "3,000원 쿠폰" in told["discord:77000"][0]


async def test_the_budget_stops_issuance_at_the_budget_exactly_and_the_rest_is_excluded(empty_store):
    await seed_orders(empty_store, 100)
    incident_id = await approved(empty_store, (5000, "order", 123_000, None))
    result = await run_compensation(empty_store, incident_id, actor=STAFF, clock=lambda: NOW, batch_size=7)
    summary = await empty_store.incidents.grant_summary(incident_id)
    assert result.issued == summary.coupons == 24  # 24 × 5,000 = 120,000 ≤ 123,000 < 125,000
    assert summary.spent == 120_000
    reasons = [e.reason for e in await empty_store.incidents.exclusions(incident_id)]
    assert reasons == ["budget_reached"] * 76
    again = await run_compensation(empty_store, incident_id, actor=STAFF, clock=lambda: NOW)
    assert (again.issued, (await empty_store.incidents.grant_summary(incident_id)).spent) == (0, 120_000)


async def test_preview_counts_and_names_exclusions_and_overridden_rules(empty_store):
    await seed_orders(empty_store, 20)  # P00000…P00003, five orders each
    async with empty_store.session() as s:
        (await s.get(Order, "O000003")).status = "cancelled"
        s.add(
            Coupon(
                code="ARCA-TEST-0001",
                order_id="O000004",
                player_id="P00000",
                amount=1000,
                issued_by="bot",
                created_at=NOW,
                expires_at=NOW + timedelta(days=30),
            )
        )
        await s.commit()
    incident_id = await approved(empty_store, (5000, "order", None, 15_000), scope="all")
    incident = await empty_store.incidents.get(incident_id)
    limits = Limits(eligible_statuses=("shipping",))
    shown = await preview(empty_store, incident, incident.plan(), limits, now=NOW)
    # P00000: O000000-2 granted (cap 15,000), O000003 cancelled, O000004 holds a coupon.
    assert shown.excluded == {"order_not_eligible": 1, "order_has_coupon": 1, "over_player_cap": 6}
    assert (shown.orders, shown.players, shown.total) == (12, 4, 60_000)
    assert {"daily_max_count", "daily_max_amount", "eligible_statuses"} <= set(shown.overrides)
    assert "O000003" in shown.samples["order_not_eligible"]
    await run_compensation(empty_store, incident_id, actor=STAFF, clock=lambda: NOW)
    after = await preview(empty_store, incident, incident.plan(), limits, now=NOW)
    assert after.orders == 0 and after.excluded["already_compensated"] == 12
    assert "이미 이 장애로 보상됨" in after.text()


async def test_per_player_plan_gives_one_coupon_per_player_of_a_csv_scope(empty_store):
    await seed_orders(empty_store, 20)
    scope = IncidentScope(kind="players", player_ids=("P00001", "P00003", "P99999"))
    incident = await empty_store.incidents.open(
        title="t", notice_ko="공지", notice_en="", scope=scope, actor=STAFF, now=NOW
    )
    plan = Plan(incident.id, "player", 10_000)
    await empty_store.incidents.set_plan(incident.id, plan, state="approved", actor=STAFF)
    result = await run_compensation(empty_store, incident.id, actor=STAFF, clock=lambda: NOW)
    assert sorted(await incident_coupons(empty_store, incident.id)) == [
        ("O000005", 10_000),
        ("O000015", 10_000),
    ]
    assert result.issued == 2
    assert [(e.target, e.reason) for e in await empty_store.incidents.exclusions(incident.id)] == [
        ("P99999", "no_order")
    ]


async def test_batches_smaller_than_a_players_orders_still_grant_every_order_once(empty_store):
    await seed_orders(empty_store, 40, per_player=8)
    incident_id = await approved(empty_store, (1000, "order", None, None))
    seen: list[int] = []
    result = await run_compensation(
        empty_store,
        incident_id,
        actor=STAFF,
        clock=lambda: NOW,
        batch_size=3,
        progress=lambda step: seen.append(step.done),
    )
    coupons = await incident_coupons(empty_store, incident_id)
    assert result.issued == len(coupons) == len({o for o, _ in coupons}) == 40
    assert seen == [8, 16, 24, 32, 40]  # one page per player: a page never splits a player's orders
