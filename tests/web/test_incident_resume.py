"""A compensation cut by its process stopping is resumed by itself: `interrupted_runs` finds an approved
run nobody has advanced for a while (and leaves one with fresh activity, which may be going on
elsewhere), and the web process resumes it at its next start, under the approver's name, each coupon
once — no Resume button pressed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from bot.incidents import run_compensation
from bot.incidents.resume import interrupted_runs
from bot.store import AuditEntry, Coupon, Store
from bot.store.incident_grant import Plan
from bot.store.incident_scope import IncidentScope
from bot.store.seed import DEFAULT_SEED, apply_seed, load_seed_file
from tests.eventually import eventually

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
APPROVER = "staff:42"


class Cut(Exception):
    """The process stopped mid-run."""


async def _cut_run(store: Store) -> int:
    """An approved plan over the delayed orders whose run stopped after its first batch."""
    incident = await store.incidents.open(
        title="택배 지연",
        notice_ko="배송이 3일 늦어집니다.",
        notice_en="",
        scope=IncidentScope(kind="orders", statuses=("delayed",)),
        actor=APPROVER,
        now=NOW,
    )
    await store.incidents.set_plan(
        incident.id,
        Plan(incident.id, "order", 3000),
        state="approved",
        actor=APPROVER,
        comp_approved_by=APPROVER,
    )

    def stop(_step: object) -> None:
        raise Cut

    with pytest.raises(Cut):
        await run_compensation(
            store, incident.id, actor=APPROVER, clock=lambda: NOW, batch_size=2, progress=stop
        )
    return incident.id


async def _age(store: Store, incident_id: int, by: timedelta) -> None:
    async with store.session() as s, s.begin():
        await s.execute(
            update(AuditEntry)
            .where(AuditEntry.target == f"incident:{incident_id}")
            .values(at=datetime.now(UTC) - by)
        )


async def _coupons(store: Store, incident_id: int) -> list[str]:
    async with store.session() as s:
        rows = await s.execute(
            select(Coupon.order_id).where(Coupon.idempotency_key.like(f"incident:{incident_id}:%"))
        )
        return list(rows.scalars())


@pytest.fixture
async def any_store(db_url: str) -> AsyncIterator[Store]:
    """The demo data on SQLite and on PostgreSQL."""
    st = Store(db_url)
    await st.open()
    await apply_seed(st, load_seed_file(DEFAULT_SEED))
    try:
        yield st
    finally:
        await st.close()


async def test_only_a_run_quiet_for_a_while_counts_as_cut(any_store: Store) -> None:
    incident_id = await _cut_run(any_store)
    assert [i.id for i in await interrupted_runs(any_store)] == []  # a batch just now: maybe going on
    await _age(any_store, incident_id, timedelta(minutes=5))
    assert [i.id for i in await interrupted_runs(any_store)] == [incident_id]
    await any_store.incidents.set_plan(incident_id, None, state="done", actor=APPROVER)
    assert await interrupted_runs(any_store) == []


async def test_the_web_process_resumes_a_cut_run_at_its_next_start(seeded_store: Store, make_web) -> None:
    store = seeded_store
    incident_id = await _cut_run(store)
    first = await _coupons(store, incident_id)
    total = await store.incidents.count_orders(await store.incidents.get(incident_id))
    assert 0 < len(first) < total
    await _age(store, incident_id, timedelta(hours=1))  # the process stopped an hour ago

    await make_web("native")  # the next start

    async def done() -> bool:
        incident = await store.incidents.get(incident_id)
        return incident is not None and incident.comp_state == "done"

    await eventually(done, within=20, what="the cut run was resumed and finished")
    coupons = await _coupons(store, incident_id)
    assert len(coupons) == len(set(coupons)) == total and set(first) <= set(coupons)
    async with store.session() as s:
        resumed = (
            await s.execute(
                select(AuditEntry.actor, AuditEntry.detail).where(
                    AuditEntry.action == "incident.compensation_resumed"
                )
            )
        ).all()
        issuers = set(
            (
                await s.execute(select(Coupon.issued_by).where(Coupon.reason == f"incident:{incident_id}"))
            ).scalars()
        )
    assert len(resumed) == 1 and APPROVER in resumed[0].detail
    assert issuers == {APPROVER}
