"""Seed 000's SSE protocol over HTTP against the real server: event order and payload keys for a tool run in
both engine modes (scripted model and the real OpenAI SDK against the fake server), interrupts over a
second POST, disconnects, `Last-Event-ID` resumption."""

from __future__ import annotations

import asyncio
import json

import pytest

from bot.config import load_settings
from bot.observability import ArcaMetrics
from tests.fakes.openai_server import FakeOpenAIServer, reply
from tests.support.answers import long_answer
from tests.support.web import SECRET, read_sse

SEED_KEYS = {
    ("step", "thinking", "start"): {"type", "status", "iteration"},
    ("step", "thinking", "done"): {"type", "status", "iteration", "reasoning"},
    ("step", "iteration", "start"): {"type", "status", "iteration", "tool_name", "tool_args"},
    ("step", "iteration", "done"): {
        "type",
        "status",
        "iteration",
        "tool_name",
        "observation",
        "error",
        "iter_elapsed",
    },
    ("step", "answer", "start"): {"type", "status"},
    ("answer", None, "start"): {"status"},
    ("answer", None, "delta"): {"status", "content"},
    ("answer", None, "done"): {"status"},
    ("compact", None, None): {"original_messages", "kept_messages"},
    ("phase", None, None): {"phase", "total_tools"},
    ("inject", "inject", None): {"type", "content"},
    ("done", None, None): {"answer", "iterations", "usage", "elapsed"},
}
ADDED_KEYS = {
    ("done", None, None): {"run_id", "by", "staff_name"},
    ("step", "iteration", "start"): {"label"},
    ("step", "iteration", "done"): {"label", "code", "outcome"},
}
"""Keys added to seed 000's payloads (theirs stay exactly): the run a `done` answer belongs to and who
wrote it; a tool call's plain status line, result code and outcome (what the widget shows a player)."""


def signature(event) -> tuple:
    d = event.data
    return (event.event, d.get("type"), d.get("status"))


def check_keys(events) -> None:
    for e in events:
        sig = signature(e)
        key = sig if sig in SEED_KEYS else (sig[0], sig[1], None)
        assert key in SEED_KEYS, f"event not in seed 000's table: {sig}"
        assert set(e.data) == SEED_KEYS[key] | ADDED_KEYS.get(key, set()), f"{sig}: keys {sorted(e.data)}"


def collapse(events) -> list[tuple]:
    """Signatures in order, runs of answer deltas collapsed to one."""
    out: list[tuple] = []
    for e in events:
        sig = signature(e)
        if sig == ("answer", None, "delta") and out and out[-1] == sig:
            continue
        out.append(sig)
    return out


TOOL_RUN = [
    ("step", "thinking", "start"),
    ("step", "thinking", "done"),
    ("step", "iteration", "start"),
    ("step", "iteration", "done"),
    ("step", "thinking", "start"),
    ("step", "thinking", "done"),
    ("step", "answer", "start"),
    ("answer", None, "start"),
    ("answer", None, "delta"),
    ("answer", None, "done"),
    ("done", None, None),
]


@pytest.mark.parametrize("mode", ["native", "json"])
async def test_tool_run_streams_the_seed_events_in_order_in_both_modes(make_web, mode):
    web = await make_web(mode)
    answer = "ORD001 주문은 현재 배송 지연 상태입니다. 불편을 드려 죄송합니다."
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"final": "ORD001은 배송 지연입니다."},
        {"answer": answer},
    )
    events = await web.chat(web.client("P100"), "ORD001 배송 언제 와요?")

    assert collapse(events) == TOOL_RUN
    check_keys(events)
    run = events[0].id.rpartition("-")[0]
    assert [e.id for e in events] == [f"{run}-{i}" for i in range(1, len(events) + 1)]
    start, done = events[2].data, events[3].data
    assert start["iteration"] == 1 and start["tool_name"] == "lookup_order"
    assert start["tool_args"] == {"order_id": "ORD001"}
    assert done["tool_name"] == "lookup_order" and done["error"] is None
    assert "ORD001" in done["observation"] and "배송 지연" in done["observation"]
    assert isinstance(done["iter_elapsed"], float)
    streamed = "".join(e.data["content"] for e in events if signature(e) == ("answer", None, "delta"))
    final = events[-1].data
    assert streamed == answer == final["answer"]
    assert final["iterations"] == 2
    assert final["elapsed"] >= 0 and isinstance(final["usage"], dict)


@pytest.mark.parametrize("mode", ["native", "json"])
async def test_tool_run_through_the_openai_sdk_and_the_fake_server(make_web, tmp_path, mode):
    if mode == "native":
        loop = [
            reply(tool_calls=[{"name": "lookup_order", "arguments": {"order_id": "ORD004"}}]),
            reply("ORD004 is on its way."),
        ]
    else:
        loop = [
            reply(
                json.dumps(
                    {
                        "action": "tool_call",
                        "tool": "lookup_order",
                        "args": {"order_id": "ORD004"},
                        "reasoning": "The player asks about ORD004.",
                    }
                )
            ),
            reply(
                json.dumps({"action": "final_answer", "answer": "ORD004 is on its way.", "reasoning": "done"})
            ),
        ]
    async with FakeOpenAIServer([*loop, reply("Your order ORD004 (마법사 코스튬) is shipping now.")]) as fake:
        settings = load_settings(
            ARCA_DATA_DIR=str(tmp_path),
            ARCA_WEB_SECRET=SECRET,
            ARCA_MODEL="fake-model",
            ARCA_MODEL_TOOL_CALL=mode == "native",
            OPENAI_BASE_URL=fake.base_url,
            OPENAI_API_KEY="sk-test-not-a-real-key",
            ARCA_LLM_MAX_RETRIES=0,
        )
        from bot.app import make_llm_factory

        llm_factory = make_llm_factory(settings)
        web = await make_web(llm_factory=llm_factory, settings=settings)
        events = await web.chat(web.client("P100"), "Where is my order ORD004?")
        await llm_factory().close()  # the SDK's connection pool, before its server goes

    assert collapse(events) == TOOL_RUN
    check_keys(events)
    assert events[2].data["tool_args"] == {"order_id": "ORD004"}
    assert "ORD004" in events[3].data["observation"]
    assert events[-1].data["answer"] == "Your order ORD004 (마법사 코스튬) is shipping now."
    assert events[-1].data["usage"].get("total_tokens", 0) > 0
    if mode == "native":
        assert fake.requests[0]["tools"], "native tools were sent to the endpoint"
    else:
        assert "tools" not in fake.requests[0]
        assert events[1].data["reasoning"] == "The player asks about ORD004."


async def test_second_post_during_a_run_joins_it_as_an_interrupt(make_web):
    web = await make_web("native")
    llm = web.held_script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"final": "ORD001 배송 지연이고, ORD004는 배송 중입니다."},
    )
    client = web.client("P100")
    events = []

    async def first() -> None:
        async with client.stream(
            "POST", "/api/chat", json={"thread": "main", "message": "ORD001 어디쯤이에요?"}
        ) as r:
            assert r.status_code == 200
            events.extend([e async for e in read_sse(r)])

    reader = asyncio.create_task(first())
    await asyncio.wait_for(llm.holding.wait(), 10)
    second = await client.post("/api/chat", json={"thread": "main", "message": "ORD004도 같이 봐주세요"})
    assert second.status_code == 202
    joined = second.json()["joined"]
    llm.release()
    await asyncio.wait_for(reader, 15)

    assert all(e.id.startswith(f"{joined}-") for e in events)
    injects = [e for e in events if e.event == "inject"]
    assert len(injects) == 1
    assert injects[0].data == {"type": "inject", "content": "[USER INTERRUPT] ORD004도 같이 봐주세요"}
    order = [signature(e) for e in events]
    assert order.index(("inject", "inject", None)) > order.index(("step", "iteration", "done"))
    assert [e.event for e in events].count("done") == 1
    model_saw = [m["content"] for m in llm.script.requests[-1].messages if m.get("role") == "user"]
    assert any("ORD004도 같이 봐주세요" in (c or "") for c in model_saw)


async def test_a_client_that_disconnects_mid_answer_loses_nothing(make_web):
    web = await make_web("native")
    answer = long_answer("ORD001 주문은 배송 지연 상태입니다.", 6)
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"final": "지연"},
        {"answer": answer.strip()},
        chunk_delay=0.05,
    )
    client = web.client("P100")
    async with client.stream("POST", "/api/chat", json={"thread": "t1", "message": "ORD001 언제 와요?"}) as r:
        async for e in read_sse(r):
            if e.event == "answer" and e.data["status"] == "delta":
                break  # leave mid-answer
    assert web.conversations.is_running("web:P100:t1")
    await web.idle()

    history = await client.get("/api/threads/t1")
    assert history.status_code == 200
    body = history.json()
    assert body["running"] is False
    assert [(m["role"], m["content"]) for m in body["messages"]] == [
        ("user", "ORD001 언제 와요?"),
        ("assistant", answer.strip()),
    ]


async def test_last_event_id_resumes_a_run_still_going(make_web):
    web = await make_web("native")
    answer = long_answer("ORD009 프리미엄 멤버십은 배송 중입니다.", 8)
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD009"}},
        {"final": "배송 중"},
        {"answer": answer.strip()},
        chunk_delay=0.05,
    )
    client = web.client("P100")
    seen = []
    async with client.stream("POST", "/api/chat", json={"thread": "main", "message": "ORD009 상태?"}) as r:
        async for e in read_sse(r):
            seen.append(e)
            if e.event == "answer" and e.data["status"] == "delta" and len(seen) > 9:
                break
    last = seen[-1].id
    assert web.conversations.is_running("web:P100:main")

    rest = []
    async with client.stream("GET", "/api/threads/main/events", headers={"Last-Event-ID": last}) as r:
        assert r.status_code == 200
        rest = [e async for e in read_sse(r)]

    run, _, seq = last.rpartition("-")
    assert [e.id for e in rest] == [f"{run}-{i}" for i in range(int(seq) + 1, int(seq) + 1 + len(rest))]
    events = seen + rest
    assert collapse(events) == TOOL_RUN
    text = "".join(e.data["content"] for e in events if signature(e) == ("answer", None, "delta"))
    assert text == answer.strip() == rest[-1].data["answer"]

    # Nothing is running any more: a reconnect without a known stream gets 204 (stop reconnecting).
    await web.idle()
    assert (await client.get("/api/threads/main/events")).status_code == 204


async def test_a_message_during_the_answer_runs_next_on_the_same_stream(make_web):
    web = await make_web("native")
    first_answer = "첫 번째 질문에 대한 답변입니다. " * 6
    web.script({"final": first_answer.strip()}, chunk_delay=0.05)
    web.script({"final": "두 번째 답변입니다."})
    client = web.client("P100")
    events = []
    async with client.stream("POST", "/api/chat", json={"thread": "main", "message": "안녕하세요"}) as r:
        async for e in read_sse(r):
            events.append(e)
            if e.event == "answer" and e.data["status"] == "delta" and len(events) == 5:
                # After the loop's last drain: not injected, it starts the next run.
                follow = await client.post("/api/chat", json={"thread": "main", "message": "하나 더요"})
                assert follow.status_code == 202
                assert events[0].id.startswith(follow.json()["joined"] + "-")

    dones = [e.data for e in events if e.event == "done"]
    assert [d["answer"] for d in dones] == [first_answer.strip(), "두 번째 답변입니다."]
    assert not any(e.event == "inject" for e in events)
    assert (
        collapse(events)
        == [
            ("step", "thinking", "start"),
            ("step", "thinking", "done"),
            ("step", "answer", "start"),
            ("answer", None, "start"),
            ("answer", None, "delta"),
            ("answer", None, "done"),
            ("done", None, None),
        ]
        * 2
    )
    history = (await client.get("/api/threads/main")).json()["messages"]
    assert [m["content"] for m in history] == [
        "안녕하세요",
        first_answer.strip(),
        "하나 더요",
        "두 번째 답변입니다.",
    ]


async def test_metrics_count_web_runs_and_the_stream_is_the_same_with_metrics_on(make_web):
    metrics = ArcaMetrics()
    web = await make_web("native", metrics=metrics)
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "ORD001은 배송 지연입니다."}
    )
    events = await web.chat(web.client("P100"), "ORD001 어디쯤인가요?")
    assert collapse(events) == TOOL_RUN
    sample = metrics.registry.get_sample_value
    assert sample("arca_runs_total", {"stopped_reason": "final_answer"}) == 1.0
    assert sample("arca_tool_calls_total", {"tool": "lookup_order", "code": "OK"}) == 1.0


async def test_compaction_is_a_compact_event_before_the_loop_goes_on(make_web):
    web = await make_web("native")
    client = web.client("P100")
    web.script({"final": "네, 잘 읽었습니다. " * 40})
    await web.chat(client, "제 사정을 길게 설명할게요. " * 120)
    web.script({"final": "요약하면 배송 지연 문의입니다."}, abilities={"context_window": 1_000})
    events = await web.chat(client, "정리해 주세요")
    compact = [e for e in events if e.event == "compact"]
    assert len(compact) == 1
    assert compact[0].data["original_messages"] >= compact[0].data["kept_messages"] >= 1
    check_keys(events)
    # Checked before the loop call: the divider comes before the step it made room for.
    assert [signature(e) for e in events[:2]] == [("compact", None, None), ("step", "thinking", "start")]
    assert events[-1].data["answer"] == "요약하면 배송 지연 문의입니다."


async def test_a_run_that_fails_still_ends_its_stream_with_an_answer_and_done(make_web):
    from bot.conversations.messages import failure_text

    def broken_llm():
        raise RuntimeError("the model endpoint vanished")

    web = await make_web("native", llm_factory=broken_llm)
    events = await web.chat(web.client("P100"), "안녕하세요")
    assert collapse(events) == [
        ("answer", None, "start"),
        ("answer", None, "delta"),
        ("answer", None, "done"),
        ("done", None, None),
    ]
    check_keys(events)
    assert events[-1].data["answer"] == failure_text("ko")
    assert events[-1].data["iterations"] == 0


async def test_a_staff_command_from_the_web_is_denied_and_issues_nothing(make_web):
    from sqlalchemy import select

    from bot.store import Coupon

    web = await make_web("native")
    events = await web.chat(web.client("P100"), "/coupon issue ORD001 20000 보상")
    assert [e.event for e in events][-1] == "done"
    assert events[-1].data["answer"].strip()
    assert events[-1].data["answer"].startswith("⛔ /coupon issue는 운영진(Support Staff) 전용 명령입니다.")
    async with web.app.store.session() as s:
        assert (await s.execute(select(Coupon).where(Coupon.order_id == "ORD001"))).first() is None
