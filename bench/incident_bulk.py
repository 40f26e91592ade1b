"""The bulk grant of an incident (issue 25): coupons per second on SQLite and PostgreSQL, and the worst
event-loop lag live conversations see while it runs (the watchdog of `bench.concurrency`, plus the p95
of a live coupon check — the read every `issue_coupon` makes — done over and over meanwhile).

    python -m bench.incident_bulk [--orders 10000] [--no-postgres]

Prints `incident_coupons_per_second=N`, `incident_coupons_per_second_postgres=N` (when a server is
up: ARCA_TEST_PG_URL or `scripts/services.sh`), `incident_loop_max_lag_ms=N`. Figures only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.concurrency import LoopWatchdog  # noqa: E402
from bench.coupon_ledger import _pg_dsn, _postgres_url  # noqa: E402
from bench.incident_seed import SEEDED_AT, order_id, seed_orders  # noqa: E402
from bot.incidents import run_compensation  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.store.incident_grant import Plan  # noqa: E402
from bot.store.incident_scope import IncidentScope  # noqa: E402

NOW = SEEDED_AT
LIVE_TASKS = 20


class StepMeter:
    """The CPU time of the loop thread's longest single step (one callback) while it is installed: what
    a bulk run itself holds the loop for, apart from how loaded the machine is (the watchdog's wall-clock
    lag also counts the time the OS gave other processes)."""

    def __init__(self) -> None:
        self.max_ms = 0.0
        self._original: Any = None

    def __enter__(self) -> StepMeter:
        handle = asyncio.events.Handle
        original = self._original = handle._run
        meter = self

        def timed(h: Any) -> None:
            start = time.thread_time()
            try:
                original(h)
            finally:
                meter.max_ms = max(meter.max_ms, (time.thread_time() - start) * 1000)

        handle._run = timed  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.events.Handle._run = self._original  # type: ignore[method-assign]


async def _run_on(url: str, orders: int, *, watch: list[LoopWatchdog] | None = None) -> dict[str, Any]:
    """The bulk run's figures on the database at `url`; `watch` receives its watchdog (`bench.loop_stalls`)."""
    store = Store(url)
    await store.open()
    try:
        await seed_orders(store, orders)
        incident = await store.incidents.open(
            title="bench",
            notice_ko="벤치",
            notice_en="",
            scope=IncidentScope("orders", statuses=("delayed",)),
            actor="bench",
            now=NOW,
        )
        await store.incidents.set_plan(
            incident.id, Plan(incident.id, "order", 5000), state="approved", actor="bench"
        )
        live: list[float] = []
        running = True
        day = (NOW, NOW + timedelta(days=1))

        async def conversation(i: int) -> None:  # a live player's coupon check, again and again
            while running:
                start = time.perf_counter()
                await store.coupons.facts(order_id((i * 37) % orders), f"live:{i}", day)
                live.append((time.perf_counter() - start) * 1000)
                await asyncio.sleep(0.01)

        tasks = [asyncio.create_task(conversation(i)) for i in range(LIVE_TASKS)]
        with LoopWatchdog() as dog, StepMeter() as steps:
            start = time.perf_counter()
            result = await run_compensation(store, incident.id, actor="bench", clock=lambda: NOW)
            wall = time.perf_counter() - start
        if watch is not None:
            watch.append(dog)
        running = False
        await asyncio.gather(*tasks)
    finally:
        await store.close()
    live.sort()
    return {
        "orders": orders,
        "issued": result.issued,
        "wall_s": round(wall, 3),
        "coupons_per_second": round(result.issued / wall),
        "loop_max_lag_ms": round(dog.max_lag_ms, 1),
        "loop_max_step_cpu_ms": round(steps.max_ms, 1),
        "load_average": round(os.getloadavg()[0], 1),
        "live_check_p50_ms": round(statistics.median(live), 2) if live else None,
        "live_check_p95_ms": round(live[int(0.95 * (len(live) - 1))], 2) if live else None,
        "live_checks": len(live),
    }


async def _run_postgres(admin_url: str, orders: int) -> dict[str, Any]:
    import asyncpg
    from sqlalchemy.engine import make_url

    name = f"arca_bench_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(_pg_dsn(admin_url))
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    try:
        return await _run_on(
            make_url(admin_url).set(database=name).render_as_string(hide_password=False), orders
        )
    finally:
        conn = await asyncpg.connect(_pg_dsn(admin_url))
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=10_000)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = asyncio.run(_run_on(f"sqlite+aiosqlite:///{Path(tmp) / 'bulk.db'}", args.orders))
    figures: dict[str, Any] = {
        "incident_coupons_per_second": sqlite["coupons_per_second"],
        "incident_loop_max_lag_ms": sqlite["loop_max_lag_ms"],
        "incident_loop_max_step_cpu_ms": sqlite["loop_max_step_cpu_ms"],
        "sqlite": sqlite,
    }
    pg_url = None if args.no_postgres else _postgres_url()
    if pg_url:
        pg = asyncio.run(_run_postgres(pg_url, args.orders))
        figures["incident_coupons_per_second_postgres"] = pg["coupons_per_second"]
        figures["incident_loop_max_lag_ms_postgres"] = pg["loop_max_lag_ms"]
        figures["postgres"] = pg
    for backend in ("sqlite", "postgres"):
        if backend in figures:
            f = figures[backend]
            print(
                f"{backend:<9} {f['issued']:>6} coupons in {f['wall_s']:>6} s = {f['coupons_per_second']:>6}/s · "
                f"loop max lag {f['loop_max_lag_ms']} ms (longest step {f['loop_max_step_cpu_ms']} ms CPU) · "
                f"live check p95 {f['live_check_p95_ms']} ms · load {f['load_average']}"
            )
    for key in (
        "incident_coupons_per_second",
        "incident_coupons_per_second_postgres",
        "incident_loop_max_lag_ms",
        "incident_loop_max_step_cpu_ms",
    ):
        if key in figures:
            print(f"{key}={figures[key]}")
    return figures


if __name__ == "__main__":
    main()
