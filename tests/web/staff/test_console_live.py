"""The console's live streams (SSE): the conversation list and an open conversation are pushed by the
server when a message arrives or a state changes, a web run in progress is followed event by event, and
a stream needs the staff session to open and ends when the session is revoked."""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy import select

from bot.staffroom.console import live
from bot.store.models import StaffSession
from tests.eventually import WITHIN, eventually
from tests.support.staff_console import Event, events_of, next_event, sign_in


async def test_the_live_streams_refuse_without_a_staff_session(web) -> None:
    anonymous, player = web.client(), web.client("P100")
    for client in (anonymous, player):
        for path in ("/staff/conversations/live", "/staff/conversations/web:P100:main/live"):
            for accept in ("text/event-stream", "text/html"):
                r = await client.get(path, headers={"Accept": accept})
                assert r.status_code == 401, (path, r.status_code)
                assert "event:" not in r.text and "P100" not in r.text


async def test_the_list_is_pushed_when_a_message_arrives_and_when_the_state_changes(web) -> None:
    staff = await sign_in(web)
    conv = web.conversations
    thread = "discord:5550001"
    async with staff.client.stream("GET", "/staff/conversations/live") as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        assert r.headers["cache-control"] == "no-store"
        stream = events_of(r)
        first = await next_event(stream, "rows")
        assert "아직 대화가 없습니다" in first.data  # the seed has no messages
        await conv.memory.append(thread, {"role": "user", "content": "결제가 두 번 됐어요"}, kind="query")
        pushed = await next_event(stream, "rows", "결제가 두 번 됐어요")
        assert f'data-thread="{thread}"' in pushed.data and "state-waiting" in pushed.data
        await staff.client.post(f"/staff/conversations/{thread}/handoff", data={"csrf": staff.csrf})
        handed = await next_event(stream, "rows", "state-handed_off")
        assert "운영진 응대" in handed.data


async def test_a_list_stream_ends_when_its_session_is_revoked(web, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "SESSION_CHECK_INTERVAL", 0.05)
    staff = await sign_in(web)
    other = await sign_in(web, "Joon", "4343")
    async with staff.client.stream("GET", "/staff/conversations/live") as r:
        stream = events_of(r)
        await next_event(stream, "rows")
        async with web.conversations.store.session() as s:
            mine = (
                await s.execute(select(StaffSession.id).where(StaffSession.staff_name == "Mina"))
            ).scalar_one()
        revoked = await other.client.post(f"/staff/sessions/{mine}/revoke", data={"csrf": other.csrf})
        assert revoked.status_code == 303

        async def drain() -> list[Event]:
            return [e async for e in stream]

        await asyncio.wait_for(drain(), WITHIN)  # the server ended the stream
    assert (await staff.client.get("/staff/conversations/live")).status_code == 401
    hub = web.server.app.state.staff_live
    # The watch nobody follows any more stops and is dropped.
    await eventually(lambda: not hub.watches, what="the unfollowed watch to be dropped")
    assert hub.watches == {}


async def test_an_open_conversation_gets_the_events_of_a_web_run_as_it_goes(web) -> None:
    staff = await sign_in(web)
    player = web.client("P100")
    thread = "web:P100:main"
    llm = web.held_script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"final": "ORD001은 배송 지연 상태입니다."},
    )
    chat = asyncio.create_task(web.chat(player, "ORD001 어디쯤이에요?"))
    await asyncio.wait_for(llm.holding.wait(), 10)
    async with staff.client.stream("GET", f"/staff/conversations/{thread}/live") as r:
        assert r.status_code == 200
        stream = events_of(r)
        history = await next_event(stream, "history", "ORD001 어디쯤이에요?")
        assert "m-user" in history.data
        state = json.loads((await next_event(stream, "state")).data)
        assert state == {"running": True, "handed_off": False}
        llm.release()
        runs: list[dict] = []
        async for e in stream:
            if e.event == "run":
                runs.append(json.loads(e.data))
                if runs[-1]["channel"] == "done":
                    break
        await chat
        tool = [r["payload"] for r in runs if r["payload"].get("type") == "iteration"]
        assert tool[0]["tool_name"] == "lookup_order" and tool[0]["status"] == "start"
        assert tool[1]["observation"].startswith("[OK] 주문 ORD001")
        answer = "".join(r["payload"].get("content", "") for r in runs if r["channel"] == "answer")
        assert answer == "ORD001은 배송 지연 상태입니다."
        assert runs[-1]["payload"]["answer"] == answer
        assert len({r["id"].rsplit("-", 1)[0] for r in runs}) == 1, "one run, numbered as the player's"
        # The answer is stored: the history is pushed again, and the state says the run is over.
        await next_event(stream, "history", "배송 지연 상태입니다")
        # (the answer is stored just before the run ends: a state push may still say running first)

        async def run_over() -> None:
            async for e in stream:
                if e.event == "state" and json.loads(e.data)["running"] is False:
                    return
            raise AssertionError("the stream ended before the run was over")

        await asyncio.wait_for(run_over(), 10)
