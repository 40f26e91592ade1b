"""A model reply is read into a typed outcome without touching the run (`bot.engine.steps`); the run
applies it in one place, and the interrupt queue is drained in one place per side."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bot.engine.agent import Stop
from bot.engine.calls import CallIds
from bot.engine.results import StopReason
from bot.engine.steps import Answer, CallTools, Unreadable, read_json, read_native
from bot.llm.base import LLMResult, ToolCall

ROOT = Path(__file__).resolve().parents[2]


def test_a_native_reply_with_calls_asks_for_them_with_ids_unique_in_the_thread():
    ids = CallIds("run-1")
    ids.seen.add("call_0")
    reply = LLMResult(content="", tool_calls=[ToolCall("call_0", "lookup_order", '{"order_id": "ORD001"}')])
    outcome = read_native(reply, ids, lambda: "blank")
    assert isinstance(outcome, CallTools)
    [call] = outcome.calls
    assert call.id != "call_0" and call.name == "lookup_order"
    assert outcome.message["tool_calls"][0]["id"] == call.id


def test_a_blank_native_answer_gets_the_fallback_but_keeps_the_draft_marker():
    outcome = read_native(LLMResult(content=""), CallIds("r"), lambda: "답변을 만들지 못했습니다.")
    assert isinstance(outcome, Answer) and not outcome.in_messages
    assert outcome.final == "답변을 만들지 못했습니다."
    assert outcome.message["content"] != outcome.final  # the thread never keeps the fallback as said


def test_a_json_reply_is_an_answer_a_call_or_unreadable():
    ids = CallIds("r")
    final = read_json(LLMResult(content='{"action": "final_answer", "answer": "네, 확인했습니다."}'), ids)
    assert isinstance(final, Answer) and final.in_messages and final.final == "네, 확인했습니다."
    call = read_json(
        LLMResult(content='{"action": "tool_call", "tool": "lookup_order", "args": {"order_id": "ORD9"}}'),
        ids,
    )
    assert isinstance(call, CallTools) and call.calls[0].arguments == '{"order_id": "ORD9"}'
    broken = read_json(LLMResult(content="음… 잠시만요"), ids)
    assert isinstance(broken, Unreadable) and broken.error


def test_stop_is_typed_and_frozen():
    stop = Stop("끝", StopReason.BUDGET, "ran out")
    assert (stop.answer, stop.reason.value, stop.error) == ("끝", "budget", "ran out")
    with pytest.raises(dataclasses.FrozenInstanceError):
        stop.answer = "x"  # type: ignore[misc]


def test_the_interrupt_queue_is_drained_in_one_place_per_side():
    drains = sorted(
        str(path.relative_to(ROOT)) for path in (ROOT / "bot").rglob("*.py") if ".drain()" in path.read_text()
    )
    # The engine's `AgentRun.take_interrupts` and the conversation's `RunState.leftovers`.
    assert drains == ["bot/conversations/run.py", "bot/engine/agent.py"]
