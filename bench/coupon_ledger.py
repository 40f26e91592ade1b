"""Benchmark: guarded coupon issues per second on SQLite (temp file) and the 100-way race on one order.

Run: `python bench/coupon_ledger.py [--issues N] [--race N]`. Prints a table and the lines
`guarded_issues_per_second=N` and `race_coupons_issued=N`; `main()` returns the figures.

When a PostgreSQL server is there, the same runs go to a fresh database on it too (dropped afterwards)
and it also prints `guarded_issues_per_second_postgres=N` and `race_coupons_issued_postgres=N`: the
server of `ARCA_TEST_PG_URL`, or else the one `scripts/services.sh start` runs when its port answers
(`--no-postgres` skips it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import tempfile
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from bench.sampler import sampled
from bot.store import Coupon, Order, Player, Store
from tools.base import Actor, ResultCode, ToolContext, ToolServices
from tools.coupon_rules import CouponRules
from tools.registry import build_registry

NOW = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)


async def _seed(store: Store, players: int) -> None:
    async with store.session() as s:
        s.add_all(Player(id=f"P{i:05d}", discord_id=str(10_000 + i), name=f"p{i}") for i in range(players))
        await s.flush()
        s.add_all(
            Order(id=f"ORD{i:05d}", player_id=f"P{i:05d}", status="delayed", item="굿즈", amount=39000)
            for i in range(players)
        )
        await s.commit()


def _ctx(store: Store, rules: CouponRules, player: int, call: str) -> ToolContext:
    return ToolContext(
        actor=Actor(discord_id=str(10_000 + player), player_id=f"P{player:05d}"),
        thread_id=f"bench:{player}",
        run_id="bench",
        store=store,
        locale="ko",
        clock=lambda: NOW,
        services=ToolServices(coupon_rules=rules, timezone="Asia/Seoul"),
    ).for_call(call)


async def _run(issues: int, race: int, profile: Path | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        return await _run_on(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}", issues, race, profile)


def _services_pg_url() -> str | None:
    """`scripts/services.sh`'s PostgreSQL URL when something listens on its port, else None."""
    port = int(os.environ.get("ARCA_PG_PORT", "55432"))
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return None
    return f"postgresql+asyncpg://arca@127.0.0.1:{port}/{os.environ.get('ARCA_PG_DB', 'arca_test')}"


def _postgres_url() -> str | None:
    return os.environ.get("ARCA_TEST_PG_URL") or _services_pg_url()


def _pg_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _run_postgres(admin_url: str, issues: int, race: int) -> dict[str, Any]:
    """The same runs on a fresh database of the PostgreSQL server at `admin_url` (dropped afterwards)."""
    import asyncpg

    name = f"arca_bench_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(_pg_dsn(admin_url))
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    try:
        url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
        return await _run_on(url, issues, race)
    finally:
        conn = await asyncpg.connect(_pg_dsn(admin_url))
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()


async def _run_on(url: str, issues: int, race: int, profile: Path | None = None) -> dict[str, Any]:
    rules = CouponRules()
    registry = build_registry()
    store = Store(url)
    await store.open()
    try:
        await _seed(store, issues + 2)
        # The first issue of a process compiles its statements and opens the writer's connection: apart.
        await registry.execute(
            "issue_coupon",
            {"order_id": f"ORD{issues + 1:05d}", "amount": 5000},
            _ctx(store, rules, issues + 1, "c"),
        )
        # Sequential guarded issues: every check of issue_coupon, one write transaction each.
        before = store.counts()
        codes = Counter()
        async with sampled("guarded_issue", profile):
            start, cpu = time.perf_counter(), time.process_time()
            for i in range(issues):
                res = await registry.execute(
                    "issue_coupon", {"order_id": f"ORD{i:05d}", "amount": 5000}, _ctx(store, rules, i, "c")
                )
                codes[res.code] += 1
            seq_elapsed = time.perf_counter() - start
            seq_cpu = time.process_time() - cpu
        per_issue = (store.counts() - before).per(issues)
        # The race: `race` concurrent calls with distinct call ids on one eligible order.
        target = issues
        start = time.perf_counter()
        results = await asyncio.gather(
            *(
                registry.execute(
                    "issue_coupon",
                    {"order_id": f"ORD{target:05d}", "amount": 5000},
                    _ctx(store, rules, target, f"race{j}"),
                )
                for j in range(race)
            )
        )
        race_elapsed = time.perf_counter() - start
        async with store.session() as s:
            live = (
                await s.execute(
                    select(func.count(Coupon.id)).where(
                        Coupon.order_id == f"ORD{target:05d}", Coupon.status.in_(("active", "pending"))
                    )
                )
            ).scalar_one()
    finally:
        await store.close()
    race_codes = Counter(r.code for r in results)
    return {
        "issues": issues,
        "issued": codes[ResultCode.ISSUED],
        "seconds": round(seq_elapsed, 3),
        "guarded_issues_per_second": round(issues / seq_elapsed) if seq_elapsed else 0,
        "cpu_us_per_issue": round(seq_cpu * 1e6 / issues),
        "statements_per_issue": per_issue["statements"],
        "commits_per_issue": per_issue["commits"],
        "write_wait_us_per_issue": round(per_issue["write_wait_ms"] * 1000),
        "race_calls": race,
        "race_seconds": round(race_elapsed, 3),
        "race_coupons_issued": int(live),
        "race_issued_results": race_codes[ResultCode.ISSUED],
        "race_already_issued_results": race_codes[ResultCode.ALREADY_ISSUED],
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--issues", type=int, default=300, help="sequential guarded issues (distinct players)"
    )
    parser.add_argument("--race", type=int, default=100, help="concurrent calls on one order")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only, even when a server is up")
    parser.add_argument("--profile", type=Path, help="write py-spy's top frames of the SQLite issues here")
    args = parser.parse_args(argv)
    figures = asyncio.run(_run(args.issues, args.race, args.profile))
    pg_url = None if args.no_postgres else _postgres_url()
    if pg_url:
        pg = asyncio.run(_run_postgres(pg_url, args.issues, args.race))
        figures["guarded_issues_per_second_postgres"] = pg["guarded_issues_per_second"]
        figures["race_coupons_issued_postgres"] = pg["race_coupons_issued"]
        figures["postgres"] = pg
    rows = [
        (
            "guarded issues (sequential)",
            f"{figures['issued']}/{figures['issues']} ISSUED",
            f"{figures['seconds']} s",
            f"{figures['guarded_issues_per_second']} /s",
        ),
        (
            "race on one order",
            f"{figures['race_issued_results']} ISSUED, {figures['race_already_issued_results']} "
            "ALREADY_ISSUED",
            f"{figures['race_seconds']} s",
            f"{figures['race_coupons_issued']} live coupon(s)",
        ),
    ]
    widths = [max(len(str(r[i])) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)))
    print(f"guarded_issues_per_second={figures['guarded_issues_per_second']}")
    for key in ("cpu_us_per_issue", "statements_per_issue", "commits_per_issue", "write_wait_us_per_issue"):
        print(f"{key}={figures[key]}")
    print(f"race_coupons_issued={figures['race_coupons_issued']}")
    if pg_url:
        print(f"guarded_issues_per_second_postgres={figures['guarded_issues_per_second_postgres']}")
        print(f"race_coupons_issued_postgres={figures['race_coupons_issued_postgres']}")
    return figures


if __name__ == "__main__":
    main()
