"""Benchmark: an order lookup through the http order source (the reference game backend over loopback
HTTP) against the builtin source (the embedded SQLite table), in one sitting.

Run: `python -m bench.game_orders [--orders N] [--rounds N]`. Prints a table and the lines
`game_order_http_p50_ms=…`, `game_order_http_p95_ms=…`, `game_order_builtin_p50_ms=…`,
`game_order_http_vs_builtin_p50_ratio=…`; `main()` returns the figures. The http reads are fresh
(`fresh=True`, as a coupon's eligibility reads them: the cache is not used); the cached http read is
measured beside them. Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from bot.game.orders import BuiltinOrderSource, HttpOrderSource, OrderSource  # noqa: E402
from bot.store import OrderRecord, Store  # noqa: E402

TOKEN = "bench-game-token"

START = datetime(2026, 3, 1, 1, 0, tzinfo=UTC)


def _orders(n: int) -> list[OrderRecord]:
    return [
        OrderRecord(
            f"ORD{i:06d}",
            f"P{i % max(1, n // 10):05d}",
            ("delayed", "shipping", "delivered")[i % 3],
            "한정판 굿즈",
            39000,
            "KRW",
            START + timedelta(minutes=i),
            START + timedelta(minutes=i),
        )
        for i in range(n)
    ]


def _wire(o: OrderRecord) -> dict[str, Any]:
    return {
        "id": o.id,
        "player_id": o.player_id,
        "status": o.status,
        "item": o.item,
        "amount": o.amount,
        "currency": o.currency,
        "ordered_at": o.ordered_at.isoformat() if o.ordered_at else None,
        "updated_at": o.updated_at.isoformat() if o.updated_at else None,
    }


@contextmanager
def _backend(folder: Path) -> Iterator[str]:
    """The reference backend in a process of its own (as a studio's would be: no shared interpreter
    lock with the bot), on a free loopback port; its base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "GAME_BACKEND_TOKEN": TOKEN, "GAME_BACKEND_DB": str(folder / "game.db")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "examples.game_backend", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _timed(source: OrderSource, ids: list[str], *, fresh: bool) -> list[float]:
    out = []
    for oid in ids:
        start = time.perf_counter()
        found = await source.order(oid, fresh=fresh)
        out.append((time.perf_counter() - start) * 1000)
        assert found is not None and found.id == oid
    return out


async def _run(n_orders: int, rounds: int) -> dict[str, Any]:
    orders = _orders(n_orders)
    ids = [orders[(i * 7919) % n_orders].id for i in range(rounds)]
    with tempfile.TemporaryDirectory(prefix="arca-bench-orders-") as tmp, _backend(Path(tmp)) as url:
        players = sorted({o.player_id for o in orders})
        world = {
            "players": [{"id": p, "name": p, "locale": "ko"} for p in players],
            "orders": [_wire(o) for o in orders],
        }
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(timeout=60) as admin:
            (await admin.post(f"{url}/_admin/world", json=world, headers=headers)).raise_for_status()
        store = Store(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}")
        await store.open()
        try:
            await store.orders.import_all(orders)
            builtin = BuiltinOrderSource(store)
            http = HttpOrderSource(base_url=url, token=TOKEN, mirror=store.orders.mirror)
            try:
                await _timed(builtin, ids[:20], fresh=True)  # warm both paths
                await _timed(http, ids[:20], fresh=True)
                b = await _timed(builtin, ids, fresh=True)
                h = await _timed(http, ids, fresh=True)
                cached = await _timed(http, ids, fresh=False)
            finally:
                await http.close()
        finally:
            await store.close()
    figures = {
        "orders": n_orders,
        "rounds": rounds,
        "game_order_builtin_p50_ms": round(statistics.median(b), 3),
        "game_order_builtin_p95_ms": round(_pct(b, 0.95), 3),
        "game_order_http_p50_ms": round(statistics.median(h), 3),
        "game_order_http_p95_ms": round(_pct(h, 0.95), 3),
        "game_order_http_cached_p50_ms": round(statistics.median(cached), 4),
    }
    figures["game_order_http_vs_builtin_p50_ratio"] = round(
        figures["game_order_http_p50_ms"] / max(figures["game_order_builtin_p50_ms"], 1e-6), 1
    )
    figures["game_order_http_vs_builtin_p95_ratio"] = round(
        figures["game_order_http_p95_ms"] / max(figures["game_order_builtin_p95_ms"], 1e-6), 1
    )
    return figures


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=500)
    args = parser.parse_args(argv)
    figures = asyncio.run(_run(args.orders, args.rounds))
    print(f"{'order lookup':<28}{'p50 ms':>10}{'p95 ms':>10}")
    print(
        f"{'builtin (SQLite table)':<28}{figures['game_order_builtin_p50_ms']:>10}{figures['game_order_builtin_p95_ms']:>10}"
    )
    print(
        f"{'http, fresh (loopback)':<28}{figures['game_order_http_p50_ms']:>10}{figures['game_order_http_p95_ms']:>10}"
    )
    print(f"{'http, cached':<28}{figures['game_order_http_cached_p50_ms']:>10}")
    for key, value in figures.items():
        if key.startswith("game_order_"):
            print(f"{key}={value}")
    return figures


if __name__ == "__main__":
    main()
