"""The console follows a Discord or console run of this process live, as it follows a web run: the run's
events come from the `RunEvents` hub of `Conversations`, in the shape the page draws for web runs."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from bot.conversations import Incoming
from bot.llm import ModelRequest, ScriptedLLM, around
from tests.eventually import eventually
from tests.support.staff_console import events_of, next_event, sign_in
from tests.support.surface import RecordingSurface

STEP_DELAY = 0.3
"""Seconds the model takes per call, and Discord per answer edit: the run is still going when the page
gets a step's events or the answer's text."""


class SlowSurface(RecordingSurface):
    """A Discord channel that takes its time to show the answer."""

    async def send(self, text: str) -> int:
        if "배송" in text:
            await asyncio.sleep(STEP_DELAY)
        return await super().send(text)

    async def edit(self, handle: Any, text: str) -> None:
        if "배송" in text:
            await asyncio.sleep(STEP_DELAY)
        await super().edit(handle, text)


async def test_a_discord_run_is_followed_live_on_its_conversation_page(web) -> None:
    staff = await sign_in(web)
    conv = web.conversations
    thread = "discord:123"
    script = ScriptedLLM(
        [
            {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
            {"final": "ORD001은 배송 지연 상태입니다."},
        ],
        mode=web.mode,
    )

    async def slowly(request: ModelRequest) -> None:
        await asyncio.sleep(STEP_DELAY)

    web.queue.append(around(script, slowly))
    async with staff.client.stream("GET", f"/staff/conversations/{thread}/live") as r:
        assert r.status_code == 200
        stream = events_of(r)
        await next_event(stream, "history")
        await eventually(lambda: conv.run_events.subscribers(thread), what="the page's stream to subscribe")
        assert conv.run_events.subscribers(thread) == 1
        actor = await conv.resolve_actor("9001", set())
        surface = SlowSurface()
        run = asyncio.create_task(conv.handle(Incoming(thread, actor, "ORD001 어디쯤이에요?"), surface))
        runs: list[dict] = []
        seen_while_running: set[str] = set()
        async for e in stream:
            if e.event != "run":
                continue
            runs.append(json.loads(e.data))
            p = runs[-1]["payload"]
            if not run.done():
                seen_while_running.add(f"{runs[-1]['channel']}:{p.get('type', '')}:{p.get('status', '')}")
            if runs[-1]["channel"] == "done":
                break
        outcome = await asyncio.wait_for(run, 15)
        assert outcome.kind == "answered"
        # The tool call, its result code and the answer's text reached the page while the run went on.
        expected = {"step:iteration:start", "step:iteration:done", "answer::start", "answer::delta"}
        assert expected <= seen_while_running, seen_while_running
        tool = [r["payload"] for r in runs if r["payload"].get("type") == "iteration"]
        assert tool[0]["tool_name"] == "lookup_order" and tool[0]["status"] == "start"
        assert tool[0]["tool_args"] == {"order_id": "ORD001"}
        assert tool[1]["observation"].startswith("[OK] 주문 ORD001")
        answer = "".join(r["payload"].get("content", "") for r in runs if r["channel"] == "answer")
        assert answer == "ORD001은 배송 지연 상태입니다." == outcome.answer
        assert next(r["payload"]["status"] for r in runs if r["channel"] == "answer") == "start"
        done = runs[-1]["payload"]
        assert done["answer"] == answer and done["iterations"] == 2 and done["run_id"]
        assert {r["id"].rsplit("-", 1)[0] for r in runs} == {done["run_id"]}, "one run, numbered by its id"
        assert [int(r["id"].rsplit("-", 1)[1]) for r in runs] == list(range(1, len(runs) + 1))
        assert surface.text == answer  # the Discord side got its answer as before
        await next_event(stream, "history", "배송 지연 상태입니다")
    await eventually(lambda: not conv.run_events.subscribers(thread), what="closing the page to unsubscribe")
    assert conv.run_events.subscribers(thread) == 0


async def test_a_non_web_thread_stream_still_needs_a_staff_session(web) -> None:
    for client in (web.client(), web.client("P100")):
        r = await client.get("/staff/conversations/discord:123/live", headers={"Accept": "text/event-stream"})
        assert r.status_code == 401 and "event:" not in r.text
    assert web.conversations.run_events.subscribers("discord:123") == 0
