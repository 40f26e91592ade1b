"""`/livez` and `/readyz` over real HTTP: alive whatever the dependencies do; ready only when the database
answers, the policy index is loaded and — with `ARCA_ORDER_SOURCE=http` — the studio's backend (the
reference one in examples/game_backend, on loopback) answers with the token; a reason when not, never a
secret."""

from __future__ import annotations

import httpx

from bot.config import load_settings
from bot.web_kit.readiness import http_game_probe
from tests.support.game_backend import TOKEN, GameBackend
from tests.support.web import SECRET


async def _get(url: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.get(url)


async def test_livez_and_readyz_answer_ok_when_everything_is_up(make_web) -> None:
    web = await make_web()
    live = await _get(f"{web.url}/livez")
    assert (live.status_code, live.json()) == (200, {"status": "ok"})
    ready = await _get(f"{web.url}/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "checks": {"database": "ok", "policy_index": "ok"}}
    assert ready.headers["cache-control"] == "no-store"


async def test_readyz_is_503_while_the_policy_index_is_building_and_livez_stays_200(make_web) -> None:
    web = await make_web(index_state=lambda: "building")
    ready = await _get(f"{web.url}/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"] == {"database": "ok", "policy_index": "building"}
    assert (await _get(f"{web.url}/livez")).status_code == 200


async def test_readyz_is_503_when_the_database_does_not_answer(make_web) -> None:
    web = await make_web()
    store = web.app.conversations.store
    await store.close()
    try:
        ready = await _get(f"{web.url}/readyz")
        assert ready.status_code == 503
        assert ready.json()["checks"]["database"].startswith("unreachable")
        assert (await _get(f"{web.url}/livez")).status_code == 200
    finally:
        await store.open()


async def test_readyz_checks_the_game_backend_when_orders_come_from_it(make_web, tmp_path) -> None:
    with GameBackend() as backend:
        settings = load_settings(
            ARCA_DATA_DIR=str(tmp_path),
            ARCA_WEB_SECRET=SECRET,
            ARCA_ORDER_SOURCE="http",
            ARCA_GAME_API_URL=backend.url,
            ARCA_GAME_API_TOKEN=TOKEN,
        )
        web = await make_web(settings=settings)
        ready = await _get(f"{web.url}/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"]["game_backend"] == "ok"
    # The backend stopped: the bot is not ready, but alive.
    down = await _get(f"{web.url}/readyz")
    assert down.status_code == 503
    assert down.json()["checks"]["game_backend"].startswith(("unreachable", "no answer"))
    assert (await _get(f"{web.url}/livez")).status_code == 200


async def test_a_refused_game_token_is_named_and_never_shown(make_web, tmp_path) -> None:
    with GameBackend() as backend:
        settings = load_settings(
            ARCA_DATA_DIR=str(tmp_path),
            ARCA_WEB_SECRET=SECRET,
            ARCA_ORDER_SOURCE="http",
            ARCA_GAME_API_URL=backend.url,
            ARCA_GAME_API_TOKEN="wrong-token-never-printed",
        )
        web = await make_web(settings=settings)
        ready = await _get(f"{web.url}/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"]["game_backend"] == "refused ARCA_GAME_API_TOKEN (401)"
    assert "wrong-token-never-printed" not in ready.text


async def test_the_game_check_is_pluggable(make_web) -> None:
    async def studio_client_says_no() -> str | None:
        return "circuit open"

    web = await make_web(game_ready=studio_client_says_no)
    ready = await _get(f"{web.url}/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"]["game_backend"] == "circuit open"


async def test_the_default_game_probe_rejects_an_answer_outside_the_contract() -> None:
    with GameBackend() as backend:
        # The backend's root is no orders route: a 404 is not "reachable" for the bot.
        probe = http_game_probe(f"{backend.url}/not-the-api", TOKEN, 3.0)
        assert await probe() == "answered 404"
