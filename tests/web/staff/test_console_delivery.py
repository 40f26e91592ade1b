"""A web thread taken over in the console: the staff reply reaches the player's widget through its
history, and the bot stays silent while staff hold the thread."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from bot.store.models import StaffOutbox
from tests.web.staff.conftest import sign_in


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
    assert events == [], "the bot stays silent while taken over: no run, no events"
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

    for _ in range(60):
        if await delivered():
            break
        await asyncio.sleep(0.05)
    assert await delivered()
