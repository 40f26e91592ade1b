"""The game's signed events: how many `order.upserted` events the bot's web server applies per second
over loopback HTTP (signature check, parsing, the idempotency row and the order write in one
transaction each), one at a time and with several senders at once, on a temp SQLite file or PostgreSQL.

    python -m bench.game_events [--events 300] [--concurrency 8] [--db-url URL]

Prints `events_per_s_sequential=N`, `events_per_s_concurrent=N`, `event_p50_ms=N`, `event_p95_ms=N`;
`main(argv)` returns the figures as a dict.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from bot.game.events import SIGNATURE_HEADER, signature_header
from bot.store import Store
from bot.store.seed import DEFAULT_SEED, apply_seed, load_seed_file
from tests.support.game_events import EVENTS, SECRET, event, order, start_events_server, stop_events_server


async def _run(events: int, concurrency: int, db_url: str | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(db_url or f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}")
        await store.open()
        await apply_seed(store, load_seed_file(DEFAULT_SEED))
        server = await start_events_server(store, Path(tmp))
        try:
            async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:

                async def send(order_id: str) -> float:
                    body = event("order.upserted", order(order_id, updated_at="2026-12-06T12:00:00Z"))
                    raw = json.dumps(body).encode()
                    started = time.perf_counter()
                    answer = await client.post(
                        EVENTS,
                        content=raw,
                        headers={SIGNATURE_HEADER: signature_header(SECRET.encode(), raw)},
                    )
                    assert answer.json() == {"status": "applied"}, answer.text
                    return time.perf_counter() - started

                for i in range(20):  # warm-up: connections, statement caches
                    await send(f"W{i}")
                started = time.perf_counter()
                latencies = [await send(f"S{i}") for i in range(events)]
                sequential = events / (time.perf_counter() - started)
                gate = asyncio.Semaphore(concurrency)

                async def gated(i: int) -> float:
                    async with gate:
                        return await send(f"C{i}")

                started = time.perf_counter()
                await asyncio.gather(*(gated(i) for i in range(events)))
                concurrent = events / (time.perf_counter() - started)
        finally:
            await stop_events_server(server)
            await store.close()
    latencies.sort()
    return {
        "events_per_s_sequential": round(sequential, 1),
        "events_per_s_concurrent": round(concurrent, 1),
        "event_p50_ms": round(statistics.median(latencies) * 1000, 1),
        "event_p95_ms": round(latencies[int(len(latencies) * 0.95) - 1] * 1000, 1),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.game_events")
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--db-url", default=None, help="a database to use (default: a temp SQLite file)")
    args = parser.parse_args(argv)
    figures = asyncio.run(_run(args.events, args.concurrency, args.db_url))
    for name, value in figures.items():
        print(f"{name}={value}")
    return figures


if __name__ == "__main__":
    main()
