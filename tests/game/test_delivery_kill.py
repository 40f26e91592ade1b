"""`kill -9` of a delivering process at any moment — before the post, during it, after the game answered
but before the answer was recorded — and a restart (`arca-bot deliveries drain`, a real process): every
grant arrives and the game holds one effective grant per coupon (the same key on every attempt). On
SQLite and on PostgreSQL (leases by `FOR UPDATE SKIP LOCKED`; the killed process's connection just
drops)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from bench.incident_seed import seed_orders
from bot.incidents import parse_scope, run_compensation
from bot.store import Coupon
from bot.store.incident_grant import Plan
from tests.eventually import eventually
from tests.support.context import NOW
from tests.support.deliveries import effective, jobs, open_store
from tests.support.game_backend import GameBackend

ROOT = Path(__file__).resolve().parents[2]
ORDERS = 120

pytestmark = pytest.mark.slow


def _env(tmp_path: Path, url: str, backend: GameBackend) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARCA_")}
    return {
        **env,
        "PYTHONPATH": str(ROOT),
        "ARCA_DATA_DIR": str(tmp_path / "var"),
        "ARCA_DB_URL": url,
        "ARCA_COUPON_DELIVERY": "game",
        "ARCA_GAME_API_URL": backend.url,
        "ARCA_GAME_API_TOKEN": backend.token,
        "ARCA_GAME_DELIVERY_LEASE_S": "2",
        "ARCA_GAME_DELIVERY_BACKOFF_MAX_S": "0.5",
    }


@pytest.mark.parametrize("moment", ["before", "during", "after"])
async def test_kill_9_at_any_moment_then_a_restart_delivers_every_grant_once(
    tmp_path: Path, game_backend: GameBackend, moment: str, db_url: str
) -> None:
    url = db_url
    store = await open_store(url)
    try:
        await seed_orders(store, ORDERS, per_player=3)
        incident = await store.incidents.open(
            title="장애",
            notice_ko="지연",
            notice_en="late",
            scope=parse_scope("status=delayed"),
            actor="staff:1",
            now=NOW,
        )
        await store.incidents.set_plan(
            incident.id, Plan(incident.id, "order", 1000), state="approved", actor="staff:1"
        )
        await run_compensation(store, incident.id, actor="staff:1", clock=lambda: NOW)
        async with store.session() as s:
            codes = set((await s.execute(select(Coupon.code))).scalars())
    finally:
        await store.close()
    assert len(codes) == ORDERS
    # `during`: the backend holds each post 1.5 s before applying it, so the kill finds them on the wire.
    game_backend.faults(latency_ms=1500 if moment == "during" else 0)
    marker = tmp_path / "stopped"
    env = _env(tmp_path, url, game_backend)
    victim = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.delivery_worker",
        url,
        game_backend.url,
        game_backend.token,
        moment,
        str(marker),
        env=env,
        cwd=ROOT,
    )
    try:
        await eventually(marker.exists, what=f"the worker to stop {moment} a post", within=60)
        if moment == "during":
            await asyncio.sleep(0.3)  # the posts are on the wire
    finally:
        victim.send_signal(signal.SIGKILL)
        assert await victim.wait() == -signal.SIGKILL
    game_backend.faults()

    restart = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "deliveries",
        "drain",
        env=env,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(restart.communicate(), 120)
    assert restart.returncode == 0, (out + err).decode()
    assert "dead letters 0" in out.decode()

    granted = effective(game_backend)
    assert set(granted) == codes and set(granted.values()) == {"granted"}  # one per coupon, none extra
    if moment != "before":  # the game had applied posts the dead process never recorded: sent again, same key
        assert game_backend.grants()["repeats"] >= 1
    store = await open_store(url)
    try:
        assert {j["state"] for j in await jobs(store)} == {"delivered"}
    finally:
        await store.close()
