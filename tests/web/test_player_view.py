"""What the stream and the history give the widget to show a player instead of the machinery: each tool
call's own status line and how it ended in plain words; who wrote a reply (the bot, a staff member by
name, or a notice); an acknowledgement, ending with `done`, for a message staff will answer."""

from __future__ import annotations

import asyncio

from bot.store.outbox import enqueue_reply
from tests.support.staff_console import sign_in
from tests.support.web import read_sse

THREAD = "web:P100:main"


def steps(events, status: str) -> list[dict]:
    return [
        e.data
        for e in events
        if e.event == "step" and e.data.get("type") == "iteration" and e.data["status"] == status
    ]


async def test_a_tool_call_carries_its_status_line_and_a_refusal_is_not_done(make_web):
    web = await make_web("native")
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"tool": "lookup_order", "args": {"order_id": "ORD999"}},
        {"final": "ORD999 주문은 찾을 수 없습니다."},
    )
    events = await web.chat(web.client("P100"), "ORD001, ORD999 주문 확인해 주세요")

    started, ended = steps(events, "start"), steps(events, "done")
    assert [s["label"] for s in started] == [
        {"ko": "주문 정보를 확인하고 있어요", "en": "Checking your order"}
    ] * 2
    assert [(d["code"], d["outcome"]) for d in ended] == [("OK", "done"), ("ORDER_NOT_FOUND", "declined")]
    # The seed's fields stay for operators: the raw name, arguments and observation.
    assert started[1]["tool_name"] == "lookup_order" and started[1]["tool_args"] == {"order_id": "ORD999"}
    assert events[-1].event == "done" and events[-1].data["by"] == "bot" and events[-1].data["run_id"]


async def test_a_call_outside_the_allowlist_ends_declined_and_an_unknown_tool_failed(make_web):
    web = await make_web("native")
    web.script(
        {"tool": "issue_coupon", "args": {"order_id": "ORD001", "amount": 5000}},
        {"tool": "drop_tables", "args": {}},
        {"final": "계정을 연결해 주세요."},
    )
    events = await web.chat(web.client(), "쿠폰 주세요")  # an anonymous visitor: not linked

    ended = steps(events, "done")
    assert [(d["code"], d["outcome"]) for d in ended] == [("DENIED", "declined"), ("ERROR", "failed")]
    labels = [s["label"]["ko"] for s in steps(events, "start")]
    assert labels == ["보상 쿠폰을 확인하고 있어요", "확인 중…"]  # an unknown name is never shown


async def test_a_message_after_a_takeover_is_acknowledged_and_its_stream_ends_with_done(make_web):
    web = await make_web("native")
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "ORD001은 배송 지연입니다."}
    )
    client = web.client("P100")
    await web.chat(client, "ORD001 언제 와요?")
    await web.conversations.set_handoff(THREAD, True, by="staff:4242")

    events = await asyncio.wait_for(web.chat(client, "사람이랑 얘기하고 싶어요"), 10)

    assert [e.event for e in events] == ["answer", "answer", "answer", "done"]
    assert events[-1].data["answer"].startswith("상담원이 곧 답변드릴게요")
    assert events[-1].data["by"] == "notice" and events[-1].data["run_id"] is None
    english = await asyncio.wait_for(web.chat(client, "Can a person help me?"), 10)
    assert english[-1].data["answer"].startswith("A member of our support team will reply shortly")
    assert not web.queue  # the bot never ran: staff answer it
    rows = await web.conversations.memory.recent(THREAD)
    assert [r.content for r in rows if r.role == "user"][-2:] == [
        "사람이랑 얘기하고 싶어요",
        "Can a person help me?",
    ]


async def test_staff_replies_in_the_history_and_live_are_signed_with_the_staff_name(make_web):
    web = await make_web("native")
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "ORD001은 배송 지연입니다."}
    )
    client = web.client("P100")
    await web.chat(client, "ORD001 언제 와요?")
    staff = await sign_in(web, name="미나", staff_id="4242")
    await staff.client.post(f"/staff/conversations/{THREAD}/handoff", data={"csrf": staff.csrf})
    text = "담당자 미나입니다. 제가 확인해 드릴게요."
    seen = (await client.get("/api/threads/main")).headers["X-Arca-Cursor"]  # streams before the reply
    await staff.client.post(f"/staff/conversations/{THREAD}/reply", data={"csrf": staff.csrf, "text": text})

    history = (await client.get("/api/threads/main")).json()["messages"]
    bot, reply = [m for m in history if m["role"] == "assistant"]
    assert (bot["by"], bot["staff_name"]) == ("bot", None)
    assert (reply["content"], reply["by"], reply["staff_name"]) == (text, "staff", "미나")

    # Live: the outbox poller opens the reply's own stream; its `done` names the staff member too.
    async with client.stream("GET", f"/api/threads/main/events?wait=10&after={seen}") as r:
        assert r.status_code == 200
        live = [e async for e in read_sse(r)]
    assert live[-1].event == "done"
    assert (live[-1].data["by"], live[-1].data["staff_name"], live[-1].data["answer"]) == (
        "staff",
        "미나",
        text,
    )


async def test_a_staff_reply_during_a_run_is_signed_on_its_answer_events(make_web):
    web = await make_web("native")
    held = web.held_script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "ORD001은 배송 지연입니다."}
    )
    client = web.client("P100")
    text = "담당자 미나입니다. 이 건은 제가 이어서 볼게요."

    async def staff_replies_while_the_run_holds() -> None:
        await asyncio.wait_for(held.holding.wait(), 10)
        # Queued as another process's staff reply would be (a console reply needs a takeover, and a
        # takeover stops the run): the outbox posts it on the run's open stream.
        await enqueue_reply(web.conversations.store, THREAD, "미나", text)
        stream = web.server.app.state.streams.open_stream(THREAD)
        for _ in range(100):  # the outbox poller (1 s) posts it on the run's open stream
            if any(e.payload.get("by") == "staff" for e in stream.events):
                break
            await asyncio.sleep(0.1)
        held.release()

    events, _ = await asyncio.gather(
        web.chat(client, "ORD001 언제 와요?"), staff_replies_while_the_run_holds()
    )

    signed = [e.data for e in events if e.event == "answer" and e.data.get("by") == "staff"]
    assert [d["status"] for d in signed] == ["start", "delta", "done"]
    assert all(d["staff_name"] == "미나" for d in signed) and signed[1]["content"] == text
    run_answer = [e.data for e in events if e.event == "answer" and "by" not in e.data]
    assert "".join(d.get("content", "") for d in run_answer) == "ORD001은 배송 지연입니다."
    assert events[-1].event == "done" and events[-1].data["by"] == "bot"
