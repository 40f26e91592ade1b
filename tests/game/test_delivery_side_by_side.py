"""Deliveries on SQLite and PostgreSQL: an incident's bulk compensation reaches the game once per coupon,
and two workers (two processes' stores on one database) delivering side by side never post one job
twice — each job is leased by one of them (`FOR UPDATE SKIP LOCKED` on PostgreSQL, a conditional
UPDATE on SQLite), and a lease left by a worker that died is taken over once it expires."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bench.incident_seed import seed_orders
from bot.incidents import parse_scope, run_compensation
from bot.store import Store
from bot.store.incident_grant import Plan
from tests.support.context import NOW
from tests.support.deliveries import effective, jobs, open_store, worker_for
from tests.support.game_backend import GameBackend

pytestmark = pytest.mark.slow


async def _incident(store: Store, orders: int) -> int:
    await seed_orders(store, orders, per_player=4)
    incident = await store.incidents.open(
        title="배송 지연",
        notice_ko="지연",
        notice_en="late",
        scope=parse_scope("status=delayed"),
        actor="staff:42",
        now=NOW,
    )
    await store.incidents.set_plan(
        incident.id, Plan(incident.id, "order", 2000), state="approved", actor="staff:42"
    )
    result = await run_compensation(store, incident.id, actor="staff:42", clock=lambda: NOW)
    assert result.issued == orders
    return incident.id


async def test_two_workers_side_by_side_post_each_grant_once(db_url: str, game_backend: GameBackend) -> None:
    first, second = await open_store(db_url), await open_store(db_url)
    try:
        await _incident(first, 600)
        game_backend.faults(latency_ms=5)
        (a, pa), (b, pb) = worker_for(first, game_backend), worker_for(second, game_backend)
        try:
            left = await asyncio.gather(a.deliver_all(), b.deliver_all())
        finally:
            await pa.aclose()
            await pb.aclose()
        assert all(x.pending == x.dead == 0 for x in left)
        seen = game_backend.grants()
        assert (len(seen["grants"]), seen["posts"], seen["repeats"]) == (600, 600, 0)
        assert a.posted > 0 and b.posted > 0 and a.posted + b.posted == 600
        assert {j["state"] for j in await jobs(first)} == {"delivered"}
    finally:
        await first.close()
        await second.close()


async def test_a_lease_left_by_a_dead_worker_is_taken_over_after_it_expires(
    db_url: str, game_backend: GameBackend
) -> None:
    store = await open_store(db_url)
    try:
        await _incident(store, 8)
        taken = await store.game_deliveries.lease("crashed:1", now=NOW, lease=timedelta(seconds=1), limit=3)
        assert len(taken) == 3
        # Another worker, now: only the five not leased; once the lease has run out, the other three.
        others = await store.game_deliveries.lease("live:2", now=NOW, lease=timedelta(seconds=30), limit=100)
        assert len(others) == 5 and not {j.id for j in taken} & {j.id for j in others}
        later = NOW + timedelta(seconds=2)
        again = await store.game_deliveries.lease("live:2", now=later, lease=timedelta(seconds=30), limit=100)
        assert sorted(j.id for j in again) == sorted(j.id for j in taken)
        assert {j.attempts for j in again} == {2}  # the crashed post counts as an attempt
    finally:
        await store.close()


async def test_an_incidents_bulk_compensation_reaches_the_game_once_per_coupon(
    db_url: str, game_backend: GameBackend
) -> None:
    store = await open_store(db_url)
    try:
        await _incident(store, 1000)
        game_backend.faults(only="grants", error_rate=0.05)
        worker, poster = worker_for(store, game_backend, concurrency=16)
        try:
            left = await worker.deliver_all()
        finally:
            await poster.aclose()
        assert left.pending == left.dead == 0
        granted = effective(game_backend)
        assert len(granted) == 1000 and set(granted.values()) == {"granted"}
        assert {j["grant_id"] for j in await jobs(store)} == set(granted)
    finally:
        await store.close()
