"""`bot.incidents.progress`: how far a bulk compensation is, read from the store by any process."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.incidents import progress, run_compensation
from bot.store import Store
from bot.store.incident_grant import Plan
from bot.store.incident_scope import IncidentScope

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


async def _incident(store: Store) -> int:
    incident = await store.incidents.open(
        title="택배 지연",
        notice_ko="배송이 3일 늦어집니다.",
        notice_en="Deliveries are 3 days late.",
        scope=IncidentScope(kind="orders", statuses=("delayed",)),
        actor="staff:42",
        now=NOW,
    )
    return incident.id


async def test_progress_reads_the_plan_state_and_the_runs_figures_from_the_store(seeded_store: Store) -> None:
    store = seeded_store
    incident_id = await _incident(store)
    assert (await progress(store, incident_id)).state is None
    total = await store.incidents.count_orders(await store.incidents.get(incident_id))
    assert total > 1
    await store.incidents.set_plan(
        incident_id, Plan(incident_id, "order", 3000), state="previewed", actor="s"
    )
    before = await progress(store, incident_id)
    assert (before.state, before.total, before.issued, before.batches, before.fraction) == (
        "previewed",
        total,
        0,
        0,
        0.0,
    )
    await store.incidents.set_plan(incident_id, None, state="approved", actor="s")
    seen = []

    async def sink(step):  # the store already holds what the run reported
        seen.append(await progress(store, incident_id))

    await run_compensation(store, incident_id, actor="s", clock=lambda: NOW, batch_size=1, progress=sink)
    assert [p.batches for p in seen] == sorted(p.batches for p in seen) and seen[0].batches >= 1
    assert seen[0].issued + seen[0].excluded < total or len(seen) == 1
    after = await progress(store, incident_id)
    assert after.state == "done" and after.issued + after.excluded == total and after.fraction == 1.0
    assert after.spent == after.issued * 3000 and f"{after.issued:,} / {total:,}" in after.text()
    assert await progress(store, 9999) is None


async def test_a_bulk_runs_batches_are_decided_off_the_event_loop_thread(db_url, monkeypatch) -> None:
    """Each batch's decisions run off the loop thread — on file SQLite with its reads and writes, on
    PostgreSQL between the driver's round trips — so live conversations keep their latency (a 500-target
    batch on the loop held it 25–190 ms; the held time is a figure of `bench/incident_bulk.py`, not
    asserted here). Exactly once still holds: every order one coupon."""
    import threading

    import bot.store.incident_grant as records
    from bench.incident_seed import seed_orders

    decided_on: set[int] = set()
    decide = records.decide_batch

    def spy(*args, **kwargs):
        decided_on.add(threading.get_ident())
        return decide(*args, **kwargs)

    monkeypatch.setattr(records, "decide_batch", spy)
    store = Store(db_url)
    await store.open()
    try:
        await seed_orders(store, 1_200)
        incident_id = await _incident(store)
        await store.incidents.set_plan(
            incident_id, Plan(incident_id, "order", 1000), state="approved", actor="s"
        )
        result = await run_compensation(store, incident_id, actor="s", clock=lambda: NOW)
        again = await run_compensation(store, incident_id, actor="s", clock=lambda: NOW)
        summary = await store.incidents.grant_summary(incident_id)
    finally:
        await store.close()
    assert (result.issued, again.issued, again.already, summary.coupons) == (1_200, 0, 1_200, 1_200)
    assert decided_on and threading.get_ident() not in decided_on
