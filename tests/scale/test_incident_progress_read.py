"""What the staff web console reads for incidents, on SQLite and PostgreSQL: a declaration with a start
and a planned end (audited), and a bulk grant's progress read from the store while a run writes it
(`bot.incidents.progress`: each batch's figures as the run reports them, exclusions included), then finished."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from bot.incidents import Progress, run_compensation
from bot.incidents.declare import declare
from bot.incidents.progress import RunProgress, progress
from bot.store import AuditEntry, Store
from bot.store.incident_grant import Plan
from bot.store.incident_scope import IncidentScope
from tests.support.context import NOW

STAFF = "staff:42"


async def test_declare_keeps_the_start_and_the_planned_end_and_audits_both(store: Store) -> None:
    incident = await declare(
        store,
        title="점검 연장",
        notice_ko="점검이 14:00까지 연장됩니다.",
        notice_en="Maintenance until 14:00.",
        scope=IncidentScope("players", player_ids=("P200",)),
        start=NOW - timedelta(hours=1),
        end=NOW + timedelta(hours=4),
        actor=STAFF,
    )
    again = await store.incidents.get(incident.id)
    assert again.started_at == NOW - timedelta(hours=1) and again.ended_at == NOW + timedelta(hours=4)
    assert again.status == "open" and [i.id for i in await store.incidents.open_for("P200")] == [incident.id]
    async with store.session() as s:
        actions = set(
            (await s.execute(select(AuditEntry.action).where(AuditEntry.target == f"incident:{incident.id}")))
            .scalars()
            .all()
        )
    assert actions == {"incident.open", "incident.planned_end"}


async def test_progress_is_read_from_the_store_while_a_run_writes_it(store: Store) -> None:
    incident = await declare(
        store,
        title="배송 지연",
        notice_ko="배송이 늦어집니다.",
        notice_en="",
        scope=IncidentScope("orders", statuses=("delayed",)),
        start=NOW,
        end=None,
        actor=STAFF,
    )
    nothing = await progress(store, incident.id)
    assert nothing.state is None and nothing.issued == 0

    await store.incidents.set_plan(
        incident.id, Plan(incident.id, "order", 5000, 40_000, None), state="approved", actor=STAFF
    )
    before = await progress(store, incident.id)
    assert (before.done, before.total, before.state) == (0, 12, "approved")  # 12 delayed orders

    seen: list[tuple[Progress, RunProgress]] = []

    async def sink(step: Progress) -> None:
        read = await progress(store, incident.id)
        assert read is not None
        seen.append((step, read))

    await run_compensation(store, incident.id, actor=STAFF, clock=lambda: NOW, batch_size=3, progress=sink)
    assert len(seen) > 1
    for reported, read in seen:  # what another process would read equals what the run reported
        assert (read.done, read.issued, read.excluded, read.spent) == (
            reported.done,
            reported.issued,
            reported.excluded,
            reported.spent,
        )
    after = await progress(store, incident.id)
    assert after.state == "done" and after.fraction == 1.0
    assert (after.issued, after.excluded, after.spent) == (8, 4, 40_000)
