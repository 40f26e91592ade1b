"""Grants into the game (issue 49): how fast the delivery worker posts the outbox to the reference game
backend with its default caps (`ARCA_GAME_DELIVERY_RATE` 1,000/s, concurrency 32), and the event-loop
lag live conversations see meanwhile against the idle loop's; then an incident of `--incident` orders
with `ARCA_COUPON_DELIVERY=game` delivered by `arca-bot deliveries drain`, killed with SIGKILL in the
middle and started again, ending with one effective grant per coupon.

    python -m bench.game_deliveries [--grants 3000] [--incident 10000] [--no-kill]

The backend runs in a process of its own (uvicorn with uvloop, SQLite file), as a studio's would; the
worker in the serving process's child process, timed from when it runs. Prints
`game_grants_per_second=N`, `game_bare_client_grants_per_second=N` (aiohttp, as the worker),
`game_deliveries_loop_max_lag_ms=N`, `game_idle_loop_max_lag_ms=N`,
`game_live_without_wave_loop_max_lag_ms=N` (the same live conversations before the wave: their own share
of the lag), `game_incident_effective_grants=N`, `game_incident_duplicate_grants=N` and the rest.
Figures only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
import httpx

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.concurrency import LoopWatchdog  # noqa: E402
from bench.incident_seed import SEEDED_AT, order_id, seed_orders  # noqa: E402
from bot.game.delivery import DeliveryCaps  # noqa: E402
from bot.incidents import run_compensation  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.store.incident_grant import Plan  # noqa: E402
from bot.store.incident_scope import IncidentScope  # noqa: E402

TOKEN = "bench-game-token"
LIVE_TASKS = 20
IDLE_S = 3.0
LEASE_S = 5
"""The lease of the bench's drain processes: the restart takes over the killed one's jobs after this."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Backend:
    """The reference backend (examples/game_backend) in a subprocess on a loopback port."""

    def __init__(self, tmp: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "GAME_BACKEND_TOKEN": TOKEN, "GAME_BACKEND_DB": str(tmp / "game.db")}
        self.proc = asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "examples.game_backend",
            "--port",
            str(self.port),
            cwd=REPO,
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        self.client = httpx.AsyncClient(
            base_url=self.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
        )

    async def start(self) -> Backend:
        self.proc = await self.proc  # type: ignore[misc]
        for _ in range(300):
            try:
                await self.client.get("/_admin/grants")
                return self
            except httpx.TransportError:
                await asyncio.sleep(0.1)
        raise RuntimeError("the reference backend did not start")

    async def grants(self) -> dict[str, Any]:
        return (await self.client.get("/_admin/grants")).json()

    async def reset(self) -> None:
        await self.client.post("/_admin/reset")

    async def stop(self) -> None:
        await self.client.aclose()
        self.proc.terminate()  # type: ignore[union-attr]
        await self.proc.wait()  # type: ignore[union-attr]


async def _incident(store: Store, orders: int) -> tuple[int, float]:
    """An approved incident over `orders` delayed orders, compensated; its id and coupons per second."""
    await seed_orders(store, orders)
    incident = await store.incidents.open(
        title="bench",
        notice_ko="벤치",
        notice_en="",
        scope=IncidentScope("orders", statuses=("delayed",)),
        actor="bench",
        now=SEEDED_AT,
    )
    await store.incidents.set_plan(
        incident.id, Plan(incident.id, "order", 5000), state="approved", actor="bench"
    )
    start = time.perf_counter()
    result = await run_compensation(store, incident.id, actor="bench", clock=lambda: SEEDED_AT)
    return incident.id, result.issued / (time.perf_counter() - start)


async def bare_client_rate(backend: Backend, n: int, concurrency: int) -> float:
    """Grants per second a bare client posts to the same backend at the same concurrency (no outbox, no
    database), with the HTTP library the worker uses (aiohttp): the ceiling this machine and the
    reference backend allow, in the same run."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(headers=headers, connector=connector) as client:
        turn = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with turn:
                key = f"bare-{i}"
                body = {"grant_id": key, "player_id": "P1", "code": key, "amount": 1000}
                async with client.post(
                    f"{backend.url}/grants", json=body, headers={"Idempotency-Key": key}
                ) as answer:
                    await answer.read()

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        return n / (time.perf_counter() - start)


def _p99(lags_ms: list[float]) -> float | None:
    ordered = sorted(lags_ms)
    return round(ordered[int(0.99 * (len(ordered) - 1))], 1) if ordered else None


async def _idle_lag() -> float:
    with LoopWatchdog() as dog:
        await asyncio.sleep(IDLE_S)
    return dog.max_lag_ms


async def delivery_rate(tmp: Path, backend: Backend, grants: int) -> dict[str, Any]:
    """`grants` coupons delivered by a serving process's worker (its own child process, default caps)
    while 20 live conversations check coupons on the main loop."""
    from bot.config import load_settings
    from bot.game.delivery.running import deliveries_for

    url = f"sqlite+aiosqlite:///{tmp / 'rate.db'}"
    settings = load_settings(
        ARCA_DATA_DIR=str(tmp / "var"),
        ARCA_DB_URL=url,
        ARCA_COUPON_DELIVERY="game",
        ARCA_GAME_API_URL=backend.url,
        ARCA_GAME_API_TOKEN=TOKEN,
    )
    store = Store(url, game_delivery=True)
    await store.open()
    try:
        _incident_id, per_s = await _incident(store, grants)
        idle = await _idle_lag()
        deliveries = deliveries_for(settings, store)
        assert deliveries is not None
        live: list[float] = []
        running = True
        day = (SEEDED_AT, SEEDED_AT + timedelta(days=1))

        async def conversation(i: int) -> None:
            while running:
                start = time.perf_counter()
                await store.coupons.facts(order_id((i * 37) % grants), f"live:{i}", day)
                live.append((time.perf_counter() - start) * 1000)
                await asyncio.sleep(0.01)

        tasks = [asyncio.create_task(conversation(i)) for i in range(LIVE_TASKS)]
        # The same conversations without a wave first: what the live loop's lag is made of by itself.
        with LoopWatchdog() as quiet:
            await asyncio.sleep(IDLE_S)
        with LoopWatchdog() as dog:
            deliveries.start()
            # Timed from when the worker process runs (a serving process starts it long before a wave);
            # the child's own start (imports, its database) is no part of the rate.
            started = time.perf_counter()
            assert await deliveries.ready(), "the delivery process did not start"
            start = time.perf_counter()
            while (await store.game_deliveries.counts())["delivered"] < grants:  # noqa: ASYNC110 (another process delivers)
                await asyncio.sleep(0.1)
            wall = time.perf_counter() - start
        running = False
        await asyncio.gather(*tasks)
        await deliveries.stop()
        seen = await backend.grants()
        dead = (await store.game_deliveries.counts())["dead"]
    finally:
        await store.close()
    live.sort()
    lags = sorted(dog.lags_ms)
    return {
        "grants": grants,
        "delivered": len(seen["grants"]),
        "dead": dead,
        "wall_s": round(wall, 2),
        "worker_process_start_s": round(start - started, 2),
        "grants_per_second": round(len(seen["grants"]) / wall),
        "incident_coupons_per_second_with_outbox": round(per_s),
        "loop_max_lag_ms": round(dog.max_lag_ms, 1),
        "loop_p99_lag_ms": _p99(lags),
        "idle_loop_max_lag_ms": round(idle, 1),
        "live_without_wave_max_lag_ms": round(quiet.max_lag_ms, 1),
        "live_without_wave_p99_lag_ms": _p99(quiet.lags_ms),
        "live_check_p50_ms": round(statistics.median(live), 2) if live else None,
        "live_check_p95_ms": round(live[int(0.95 * (len(live) - 1))], 2) if live else None,
        "load_average": round(os.getloadavg()[0], 1),
    }


def _drain_env(tmp: Path, url: str, backend: Backend) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARCA_")}
    return {
        **env,
        "PYTHONPATH": str(REPO),
        "ARCA_DATA_DIR": str(tmp / "var"),
        "ARCA_DB_URL": url,
        "ARCA_COUPON_DELIVERY": "game",
        "ARCA_GAME_API_URL": backend.url,
        "ARCA_GAME_API_TOKEN": TOKEN,
        "ARCA_GAME_DELIVERY_LEASE_S": str(LEASE_S),
    }


async def incident_with_a_kill(tmp: Path, backend: Backend, orders: int, *, kill: bool) -> dict[str, Any]:
    """An incident's `orders` coupons delivered by `arca-bot deliveries drain`, killed -9 halfway."""
    url = f"sqlite+aiosqlite:///{tmp / 'incident.db'}"
    store = Store(url, game_delivery=True)
    await store.open()
    try:
        _incident_id, _per_s = await _incident(store, orders)
        codes = {j.coupon_code for j in await store.game_deliveries.list(limit=orders + 10)}
    finally:
        await store.close()
    env = _drain_env(tmp, url, backend)
    command = (sys.executable, "-m", "bot", "deliveries", "drain")
    start = time.perf_counter()
    killed_at = None
    if kill:
        first = await asyncio.create_subprocess_exec(
            *command, env=env, cwd=REPO, stdout=asyncio.subprocess.DEVNULL
        )
        while len((await backend.grants())["grants"]) < orders // 2:
            if first.returncode is not None:
                break
            await asyncio.sleep(0.2)
        first.send_signal(signal.SIGKILL)
        await first.wait()
        killed_at = len((await backend.grants())["grants"])
    second = await asyncio.create_subprocess_exec(*command, env=env, cwd=REPO, stdout=asyncio.subprocess.PIPE)
    out, _ = await second.communicate()
    wall = time.perf_counter() - start
    seen = await backend.grants()
    granted = [g["grant_id"] for g in seen["grants"]]
    by_order: dict[str, int] = {}
    for g in seen["grants"]:
        by_order[g["order_id"]] = by_order.get(g["order_id"], 0) + 1
    return {
        "orders": orders,
        "killed_after_grants": killed_at,
        "restart_exit": second.returncode,
        "restart_said": out.decode().strip().splitlines()[-1] if out else "",
        "effective_grants": len(set(granted) & codes),
        "grants_without_a_coupon": len(set(granted) - codes),
        "coupons_without_a_grant": len(codes - set(granted)),
        "duplicate_grants": sum(n - 1 for n in by_order.values() if n > 1) + len(granted) - len(set(granted)),
        "repeated_posts_answered_as_granted_before": seen["repeats"],
        "wall_s_including_the_lease_wait": round(wall, 1),
    }


async def _main(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="arca-grants-") as name:
        tmp = Path(name)
        backend = await Backend(tmp).start()
        try:
            bare = await bare_client_rate(backend, min(args.grants, 2000), DeliveryCaps().concurrency)
            await backend.reset()
            rate = await delivery_rate(tmp, backend, args.grants)
            await backend.reset()
            wave = await incident_with_a_kill(tmp, backend, args.incident, kill=not args.no_kill)
        finally:
            await backend.stop()
    return {
        "game_grants_per_second": rate["grants_per_second"],
        "game_bare_client_grants_per_second": round(bare),
        "game_grants_vs_bare_client_ratio": round(rate["grants_per_second"] / bare, 2),
        "game_deliveries_loop_max_lag_ms": rate["loop_max_lag_ms"],
        "game_deliveries_loop_p99_lag_ms": rate["loop_p99_lag_ms"],
        "game_idle_loop_max_lag_ms": rate["idle_loop_max_lag_ms"],
        "game_live_without_wave_loop_max_lag_ms": rate["live_without_wave_max_lag_ms"],
        "game_deliveries_lag_above_idle_ms": round(rate["loop_max_lag_ms"] - rate["idle_loop_max_lag_ms"], 1),
        "game_incident_coupons_per_second_with_outbox": rate["incident_coupons_per_second_with_outbox"],
        "game_incident_effective_grants": wave["effective_grants"],
        "game_incident_duplicate_grants": wave["duplicate_grants"],
        "rate": rate,
        "incident": wave,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--grants", type=int, default=3000, help="grants delivered for the rate (default 3000)"
    )
    parser.add_argument(
        "--incident", type=int, default=10_000, help="orders of the killed incident (default 10000)"
    )
    parser.add_argument("--no-kill", action="store_true", help="deliver the incident without the kill -9")
    args = parser.parse_args(argv)
    figures = asyncio.run(_main(args))
    for key, value in figures.items():
        if not isinstance(value, dict):
            print(f"{key}={value}")
    for part in ("rate", "incident"):
        print(f"{part}: " + ", ".join(f"{k}={v}" for k, v in figures[part].items()))
    return figures


if __name__ == "__main__":
    main()
