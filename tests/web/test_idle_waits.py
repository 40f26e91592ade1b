"""`GET /api/threads/{thread}/events?wait=`, the widget's wait between runs: a stream that started and
ended between two waits (a staff reply) is handed to the next wait that names the last stream it knew
(`after=`, from the `X-Arca-Cursor` header), never lost; a wait ends as soon as its client goes away or
the server stops, so nothing is left waiting 25 s for nobody."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest

from tests.eventually import eventually
from tests.support.web import THREAD, read_sse, reply_stream

STAFF = "담당자 미나입니다. 제가 확인해 드릴게요."


@pytest.fixture
async def web(make_web):
    return await make_web("native")


async def test_a_stream_that_ended_between_two_waits_goes_to_the_next_wait(web) -> None:
    player = web.client("P100")
    web.script({"final": "확인해 볼게요."})
    await web.chat(player, "쿠폰이 안 왔어요")
    await web.idle()
    cursor = (await player.get("/api/threads/main")).headers["x-arca-cursor"]

    stream = reply_stream(web, STAFF)  # no wait is open: nobody is handed it
    await eventually(lambda: stream.closed, what="the reply's stream ends")
    assert (await player.get("/api/threads/main/events?wait=0.2")).status_code == 204  # a wait of old

    async with player.stream("GET", f"/api/threads/main/events?wait=20&after={cursor}") as r:
        assert r.status_code == 200 and r.headers["x-arca-run"] == stream.id
        events = [e async for e in read_sse(r)]
        seen = r.headers["x-arca-cursor"]
    assert [e.event for e in events] == ["answer", "answer", "answer", "done"]
    assert events[1].data["content"] == STAFF
    # Once seen, it is not handed out again: the next wait waits.
    r = await player.get(f"/api/threads/main/events?wait=0.2&after={seen}")
    assert r.status_code == 204 and int(r.headers["x-arca-cursor"]) >= int(seen)


async def open_wait(web):
    """After a first answer, a player's idle `?wait=25` that has reached the server: (streams, its request)."""
    player = web.client("P100")
    web.script({"final": "확인해 볼게요."})
    await web.chat(player, "안녕하세요")
    await web.idle()
    streams = web.server.app.state.streams
    wait = asyncio.create_task(player.get("/api/threads/main/events?wait=25"))
    await eventually(lambda: streams.waiting(THREAD) == 1, what="the wait reaches the server")
    return streams, wait


async def test_a_wait_ends_when_its_client_goes_away(web) -> None:
    streams, wait = await open_wait(web)
    wait.cancel()  # the page closes: the connection goes
    with contextlib.suppress(asyncio.CancelledError):
        await wait
    await eventually(lambda: streams.waiting(THREAD) == 0, what="the server stops waiting for nobody")


async def test_a_wait_is_answered_when_the_server_stops(web) -> None:
    _streams, wait = await open_wait(web)
    await web.server.stop()
    try:
        response = await asyncio.wait_for(wait, 10)
    except httpx.HTTPError as exc:  # cut off by the shutdown instead of answered
        raise AssertionError(f"the wait was cut off: {exc!r}") from None
    assert response.status_code == 204
