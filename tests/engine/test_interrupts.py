"""Interrupts: drain points per mode, one pinned [USER INTERRUPT] message, suppressed finals, leftovers."""

from __future__ import annotations

import pytest

from bot.engine import InterruptQueue, ReActAgent
from bot.llm import ScriptedLLM
from tests.support.context import make_ctx
from tests.support.engine import MODES

LOOKUP = {"tool": "lookup_order", "args": {"order_id": "ORD001"}}


async def run_with(steps, tools, mode, deliver, *, memory=None):
    """`deliver(event, queue)` runs inside the event callback, like the replay runner's after_step."""
    queue = InterruptQueue()
    llm = ScriptedLLM(steps, mode=mode)
    events = []

    def on_event(event):
        events.append(event)
        deliver(event, queue)

    result = await ReActAgent(llm, tools).run(
        "ORD001 쿠폰 주세요", make_ctx(), interrupts=queue, on_event=on_event, memory=memory
    )
    return result, events, llm


async def test_json_mode_drains_right_after_the_assistant_message_before_the_final_answer_check(tools):
    queue_text = "빨리 부탁해요"
    steps = [LOOKUP, {"final": "premature"}, {"final": "ok"}]

    def deliver(event, queue):
        # Arrives while the model composes its second reply (after the observation was appended).
        if event.type == "thinking" and event.status == "start" and event.iteration == 2:
            queue.put(queue_text)

    result, events, llm = await run_with(steps, tools, "json", deliver)
    assert result.answer == "ok" and result.iterations == 3 and llm.unused_steps == []
    msgs = result.messages
    i = next(
        k for k, m in enumerate(msgs) if m["role"] == "assistant" and "premature" in (m["content"] or "")
    )
    assert msgs[i + 1]["content"] == f"[USER INTERRUPT] {queue_text}" and msgs[i + 1]["pinned"] is True
    assert [e.content for e in events if e.type == "inject"] == [f"[USER INTERRUPT] {queue_text}"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_message_sent_during_a_tool_reaches_the_next_call_in_both_modes(tools, mode):
    # The replay runner delivers `after_step: 0` here; the same script must fit both modes.
    steps = [LOOKUP, {"final": "확인했습니다"}]

    def deliver(event, queue):
        if event.type == "iteration" and event.status == "done":
            queue.put("빨리 부탁해요")

    result, _events, llm = await run_with(steps, tools, mode, deliver)
    assert result.answer == "확인했습니다" and llm.unused_steps == [] and llm.violations == []
    second_call = [r for r in llm.requests if r.purpose == "loop"][1].messages
    assert second_call[-1]["content"] == "[USER INTERRUPT] 빨리 부탁해요"


async def test_native_mode_drains_only_after_all_tool_results_are_appended(tools):
    steps = [{"tools": [LOOKUP, {"tool": "echo", "args": {"text": "x"}}]}, {"final": "ok"}]

    def deliver(event, queue):
        if event.type == "iteration" and event.status == "done" and event.tool_name == "lookup_order":
            queue.put("추가 질문")

    result, _events, llm = await run_with(steps, tools, "native", deliver)
    roles = [m["role"] for m in result.messages]
    assert roles[-5:] == ["assistant", "tool", "tool", "user", "assistant"]
    assert llm.violations == []
    # The model saw the interrupt on its next call, right after both results.
    last_loop = [r for r in llm.requests if r.purpose == "loop"][-1].messages
    assert last_loop[-1]["content"] == "[USER INTERRUPT] 추가 질문"
    assert [m["role"] for m in last_loop[-4:]] == ["assistant", "tool", "tool", "user"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_pending_final_answer_is_suppressed_when_something_was_injected(tools, mode):
    steps = [{"final": "premature"}, {"final": "answered both"}]

    def deliver(event, queue):
        # Arrives while the model is composing its first answer.
        if event.type == "thinking" and event.status == "start" and event.iteration == 1:
            queue.put("그리고 ORD002도요")

    result, events, llm = await run_with(steps, tools, mode, deliver)
    assert result.answer == "answered both" and result.iterations == 2
    assert result.injected == ["그리고 ORD002도요"]
    assert [e.type for e in events].count("inject") == 1
    assert llm.unused_steps == []


@pytest.mark.parametrize("mode", MODES)
async def test_several_messages_in_one_drain_become_one_pinned_interrupt_message(tools, mode):
    steps = [LOOKUP, {"final": "x"}, {"final": "ok"}]

    def deliver(event, queue):
        if event.type == "iteration" and event.status == "done":
            queue.put("첫째")
            queue.put("둘째")

    result, events, _ = await run_with(steps, tools, mode, deliver)
    interrupts = [m for m in result.messages if (m.get("content") or "").startswith("[USER INTERRUPT]")]
    assert len(interrupts) == 1 and interrupts[0]["pinned"] is True
    assert "첫째" in interrupts[0]["content"] and "둘째" in interrupts[0]["content"]
    assert [e.messages for e in events if e.type == "inject"] == [["첫째", "둘째"]]


@pytest.mark.parametrize("mode", MODES)
async def test_a_message_after_the_last_drain_is_handed_back_as_leftover(tools, mode, memory):
    def deliver(event, queue):
        if event.type == "answer" and event.channel == "step":
            queue.put("너무 늦게 온 메시지")

    result, events, _ = await run_with([{"final": "ok"}], tools, mode, deliver, memory=memory)
    assert result.leftover_interrupts == ["너무 늦게 온 메시지"]
    assert not any(e.type == "inject" for e in events)


@pytest.mark.parametrize("mode", MODES)
async def test_injected_interrupts_are_persisted_pinned(tools, mode, memory, db):
    from sqlalchemy import select

    from bot.store import ThreadMessage

    def deliver(event, queue):
        if event.type == "iteration" and event.status == "done":
            queue.put("메모해 주세요")

    await run_with([LOOKUP, {"final": "a"}, {"final": "b"}], tools, mode, deliver, memory=memory)
    async with db.session() as s:
        rows = list(
            (
                await s.execute(select(ThreadMessage).where(ThreadMessage.content.like("[USER INTERRUPT]%")))
            ).scalars()
        )
    assert len(rows) == 1 and rows[0].pinned and rows[0].meta == {"kind": "interrupt"}


@pytest.mark.parametrize("mode", MODES)
async def test_a_coupon_is_held_when_the_player_wrote_while_the_model_decided_on_it(tools, probe, mode):
    """ "Cancel, do not issue" typed while the model composes its issue_coupon call: the call is not run,
    the model reads the message first and decides again."""
    issue = {"tool": "issue_coupon", "args": {"order_id": "ORD001", "amount": 1000}}
    steps = [LOOKUP, issue, {"final": "발급하지 않았습니다"}]

    def deliver(event, queue):
        if event.type == "thinking" and event.status == "start" and event.iteration == 2:
            queue.put("취소할게요, 쿠폰 발급하지 마세요")

    result, _events, llm = await run_with(steps, tools, mode, deliver)
    assert not [c for c in probe.calls if c.startswith("issue_coupon")]  # the coupon tool never ran
    assert result.answer == "발급하지 않았습니다" and llm.unused_steps == [] and llm.violations == []
    held = result.tool_outcomes[-1]
    assert held.name == "issue_coupon" and held.result.code == "ERROR"
    assert held.observation.count("Not run: the player sent a new message") == 1
    last_loop = [r for r in llm.requests if r.purpose == "loop"][-1].messages
    sent = "\n".join(str(m.get("content")) for m in last_loop)
    assert "[USER INTERRUPT] 취소할게요, 쿠폰 발급하지 마세요" in sent and "Not run" in sent


@pytest.mark.parametrize("mode", MODES)
async def test_a_read_call_still_runs_while_a_message_waits(tools, probe, mode):
    def deliver(event, queue):
        if event.type == "thinking" and event.status == "start" and event.iteration == 1:
            queue.put("빨리 부탁해요")

    result, _events, _llm = await run_with([LOOKUP, {"final": "ok"}], tools, mode, deliver)
    assert result.tool_outcomes[0].result.code == "OK" and result.answer == "ok"
