"""Who delivers: every long-running process runs a delivery worker when `ARCA_COUPON_DELIVERY=game` —
here `arca-bot web` (`bot.serving.process.serve`) posts a coupon staff issued from another process to the game,
and stops on SIGTERM with the job recorded."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal

import httpx

from bot.game.delivery.running import deliveries_for
from bot.serving.process import serve
from bot.store import Store
from tests.eventually import eventually
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.support.context import NOW, STAFF
from tests.support.deliveries import effective, jobs, json_logs_to
from tests.support.discord import make_settings
from tests.support.game_backend import GameBackend
from tests.support.serving import SECRET, _free_port
from tests.support.tools import seed
from tools.coupon_rules import CouponRules
from tools.ledger import staff_issue


async def test_the_web_process_delivers_what_another_process_issued(
    tmp_path, game_backend: GameBackend
) -> None:
    port = _free_port()
    settings = make_settings(
        tmp_path / "var",
        discord_token=None,
        web_port=port,
        web_secret=SECRET,
        coupon_delivery="game",
        game_api_url=game_backend.url,
        game_api_token=game_backend.token,
    )
    running = asyncio.create_task(serve(settings, discord=False, web=True, policy_index=EmptyPolicyIndex()))
    other = Store(settings.database_url, game_delivery=True)  # the Discord process, say
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:

            async def health() -> bool:
                try:
                    return (await client.get("/healthz")).status_code == 200
                except httpx.TransportError:
                    assert not running.done(), running.result()
                    return False

            await eventually(health, what="/healthz")
        await other.open()
        issued = await staff_issue(
            other,
            CouponRules(),
            actor=STAFF,
            order_id="ORD001",
            amount=3000,
            reason="사과",
            idempotency_key="x1",
            now=NOW,
        )
        code = issued.data["coupon"]["code"]

        async def arrived() -> bool:
            return effective(game_backend) == {code: "granted"}

        await eventually(arrived, what="the grant in the game")
        os.kill(os.getpid(), signal.SIGTERM)
        assert await asyncio.wait_for(running, 15) == 0
        assert [(j["grant_id"], j["state"]) for j in await jobs(other)] == [(code, "delivered")]
    finally:
        await other.close()
        if not running.done():
            running.cancel()
            await asyncio.wait({running}, timeout=10)


async def test_the_worker_process_alerts_through_its_parent_and_ends_with_it(
    tmp_path, game_backend: GameBackend
) -> None:
    """The serving process's worker runs in a child process (its HTTP work never holds the live loop's
    GIL); a dead letter's alert reaches the parent's staff notifications, and the child ends when its
    parent's end of the pipe closes (what a kill -9 of the parent does)."""
    settings = make_settings(
        tmp_path / "var",
        discord_token=None,
        coupon_delivery="game",
        game_api_url=game_backend.url,
        game_api_token=game_backend.token,
    )
    store = Store(settings.database_url, game_delivery=True)
    await store.open()
    await seed(store)
    told: list[tuple[str, dict]] = []
    heard = asyncio.Event()

    async def notify(kind: str, payload: dict) -> None:
        told.append((kind, payload))
        heard.set()

    child_log = tmp_path / "child.log"
    deliveries = deliveries_for(settings, store, notify, functools.partial(json_logs_to, str(child_log)))
    assert deliveries is not None
    try:
        game_backend.faults(only="grants", refuse_next=1, refuse_reason="player account is suspended")
        issued = await staff_issue(
            store,
            CouponRules(),
            actor=STAFF,
            order_id="ORD001",
            amount=3000,
            reason="사과",
            idempotency_key="x1",
            now=NOW,
        )
        deliveries.start()
        assert await deliveries.ready(), "the worker process said it runs"
        started = [json.loads(line) for line in child_log.read_text(encoding="utf-8").splitlines()]
        assert any("worker process" in r["message"] for r in started), (
            "the child logs as its parent set it up"
        )
        await asyncio.wait_for(heard.wait(), 30)
        kind, payload = told[0]
        assert kind == "delivery_dead" and payload["grant_ids"] == [issued.data["coupon"]["code"]]
        assert payload["last_error"] == "422 player account is suspended"
        child = deliveries._process
        deliveries._pipe.close()  # as if the parent were gone
        await asyncio.to_thread(child.join, 20)
        assert child.exitcode == 0
    finally:
        deliveries._pipe = None
        await deliveries.stop()
        await store.close()
