"""The line the model reads about an attached file ("[the player attached a screenshot: …]") is for the model
only: it is in no event of the player's stream (the `inject` of a follow-up with a file included) and not in
the thread history the widget shows."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.attachments.files import png
from tests.support.web import read_sse

NOTE = "the player attached"


async def _upload(client: Any, name: str) -> str:
    r = await client.post("/api/attachments", params={"name": name}, content=png())
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


async def test_a_follow_up_with_a_screenshot_injects_without_the_models_note(make_web) -> None:
    web = await make_web()
    held = web.held_script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "ORD001은 배송 지연입니다."}
    )
    player = web.client("P100")
    events: list[Any] = []

    async def first() -> None:
        body = {"thread": "main", "message": "ORD001 언제 와요?"}
        async with player.stream("POST", "/api/chat", json=body) as r:
            assert r.status_code == 200
            events.extend([e async for e in read_sse(r)])

    running = asyncio.create_task(first())
    await asyncio.wait_for(held.holding.wait(), 10)
    shot = await _upload(player, "결제 화면.png")
    joined = await player.post(
        "/api/chat", json={"thread": "main", "message": "이 화면이에요", "attachments": [shot]}
    )
    assert joined.status_code == 202, joined.text
    await asyncio.sleep(0.3)
    held.release()
    await asyncio.wait_for(running, 20)
    await web.idle()
    injected = [e.data for e in events if e.event == "inject"]
    assert injected and "이 화면이에요" in injected[0]["content"]
    for e in events:
        assert NOTE not in json.dumps(e.data, ensure_ascii=False), (e.event, e.data)
    model_saw = json.dumps([m for r in held.llm.requests for m in r.messages], ensure_ascii=False)
    assert f"[{NOTE} a screenshot: 결제 화면.png" in model_saw  # the model still reads it


async def test_the_history_shows_the_players_words_without_the_models_note(make_web) -> None:
    web = await make_web()
    web.script({"final": "확인했습니다."})
    player = web.client("P100")
    shot = await _upload(player, "오류.png")
    async with player.stream(
        "POST", "/api/chat", json={"thread": "main", "message": "오류가 나요", "attachments": [shot]}
    ) as r:
        [e async for e in read_sse(r)]
    await web.idle()
    history = (await player.get("/api/threads/main")).json()["messages"]
    users = [(m["content"], m["files"]) for m in history if m["role"] == "user"]
    assert users == [("오류가 나요", ["오류.png"])]  # the widget shows the file as a file line
