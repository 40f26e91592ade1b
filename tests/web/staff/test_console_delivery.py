"""A web thread taken over in the console: the staff reply reaches the player's widget through its
history, and the bot stays silent while staff hold the thread."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from bot.store.models import StaffOutbox
from tests.eventually import eventually
from tests.support.staff_console import sign_in
from tests.support.web import read_sse


async def test_a_staff_reply_shows_in_the_players_web_history_and_the_bot_stays_silent(web) -> None:
    player = web.client("P100")
    web.script({"final": "네"}, {"answer": "확인해 볼게요."})
    await web.chat(player, "쿠폰이 안 왔어요")
    await web.idle()
    thread = "web:P100:main"
    assert await web.conversations.memory.recent(thread), "the player's thread id is the one staff see"

    staff = await sign_in(web)
    await staff.client.post(f"/staff/conversations/{thread}/handoff", data={"csrf": staff.csrf})
    events = await web.chat(player, "상담원 연결해 주세요")  # no model is scripted: the bot must not run
    await web.idle()
    # The bot does not run (no step events, no run id): the player is only told a person will answer,
    # and the stream ends with its `done`.
    assert [e.event for e in events] == ["answer", "answer", "answer", "done"], events
    assert events[-1].data["run_id"] is None and events[-1].data["answer"].startswith(
        "상담원이 곧 답변드릴게요"
    )
    await staff.client.post(
        f"/staff/conversations/{thread}/reply", data={"csrf": staff.csrf, "text": "담당자 미나입니다."}
    )

    history = (await player.get("/api/threads/main")).json()["messages"]
    assert [(m["role"], m["content"]) for m in history[-2:]] == [
        ("user", "상담원 연결해 주세요"),
        ("assistant", "담당자 미나입니다."),
    ]

    async def delivered() -> bool:  # the web process's poller claims the row: delivered exactly once
        async with web.conversations.store.session() as s:
            rows = (await s.execute(select(StaffOutbox).where(StaffOutbox.thread_id == thread))).scalars()
            return [(r.staff, r.delivered_at is not None) for r in rows] == [("Mina", True)]

    await eventually(delivered, what="the poller to deliver the reply")
    assert await delivered()


async def test_a_staff_reply_reaches_the_players_live_stream_while_staff_hold_the_thread(web) -> None:
    player = web.client("P100")
    thread = "web:P100:main"
    staff = await sign_in(web)
    await staff.client.post(f"/staff/conversations/{thread}/handoff", data={"csrf": staff.csrf})
    acknowledged = await web.chat(player, "상담원 연결해 주세요")  # stored; the bot does not run
    assert [e.event for e in acknowledged] == ["answer", "answer", "answer", "done"]
    assert acknowledged[-1].data["by"] == "notice" and acknowledged[-1].data["run_id"] is None
    assert (await player.get("/api/threads/main/events?wait=0.2")).status_code == 204, "nothing to wait for"

    async def listen() -> list:
        # What the widget does between runs: wait for the thread's next stream.
        async with player.stream("GET", "/api/threads/main/events?wait=20") as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            return [e async for e in read_sse(r)]

    listener = asyncio.create_task(listen())
    streams = web.server.app.state.streams
    # Staff reply once the request waits on the server (a fixed 0.2 s can be outrun on a loaded machine).
    await eventually(lambda: streams.waiting(thread), what="the player's wait to reach the server")
    assert not listener.done()
    await staff.client.post(
        f"/staff/conversations/{thread}/reply", data={"csrf": staff.csrf, "text": "담당자 미나입니다."}
    )
    events = await asyncio.wait_for(listener, 10)
    signed = {"by": "staff", "staff_name": "Mina"}
    assert [(e.event, e.data) for e in events] == [
        ("answer", {"status": "start", **signed}),
        ("answer", {"status": "delta", "content": "담당자 미나입니다.", **signed}),
        ("answer", {"status": "done", **signed}),
        (
            "done",
            {
                "answer": "담당자 미나입니다.",
                "iterations": 0,
                "usage": {},
                "elapsed": 0.0,
                "run_id": None,
                **signed,
            },
        ),
    ]
    # Resumable like any stream; and a second player never sees it (the thread id names the player).
    resumed = await player.get("/api/threads/main/events", headers={"Last-Event-ID": events[1].id})
    assert [e for e in resumed.text.splitlines() if e.startswith("event:")] == [
        "event: answer",
        "event: done",
    ]
    other = web.client("P200")
    assert (await other.get("/api/threads/main/events?wait=0.2")).status_code == 204
