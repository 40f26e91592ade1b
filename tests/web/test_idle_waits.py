"""`GET /api/threads/{thread}/events?wait=`, the widget's wait between runs: a wait ends as soon as its
client goes away or the server stops, so nothing is left waiting 25 s for nobody."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest

THREAD = "web:P100:main"
STAFF = "담당자 미나입니다. 제가 확인해 드릴게요."


@pytest.fixture
async def web(make_web):
    return await make_web("native")


async def _until(condition, what: str) -> None:
    for _ in range(250):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{what}: not within 5 s")


async def test_a_wait_ends_when_its_client_goes_away(web) -> None:
    player = web.client("P100")
    web.script({"final": "확인해 볼게요."})
    await web.chat(player, "안녕하세요")
    await web.idle()
    streams = web.server.app.state.streams
    wait = asyncio.create_task(player.get("/api/threads/main/events?wait=25"))
    await _until(lambda: streams.waiting(THREAD) == 1, "the wait reaches the server")
    wait.cancel()  # the page closes: the connection goes
    with contextlib.suppress(asyncio.CancelledError):
        await wait
    await _until(lambda: streams.waiting(THREAD) == 0, "the server stops waiting for nobody")


async def test_a_wait_is_answered_when_the_server_stops(web) -> None:
    player = web.client("P100")
    web.script({"final": "확인해 볼게요."})
    await web.chat(player, "안녕하세요")
    await web.idle()
    streams = web.server.app.state.streams
    wait = asyncio.create_task(player.get("/api/threads/main/events?wait=25"))
    await _until(lambda: streams.waiting(THREAD) == 1, "the wait reaches the server")
    await web.server.stop()
    try:
        response = await asyncio.wait_for(wait, 10)
    except httpx.HTTPError as exc:  # cut off by the shutdown instead of answered
        raise AssertionError(f"the wait was cut off: {exc!r}") from None
    assert response.status_code == 204
