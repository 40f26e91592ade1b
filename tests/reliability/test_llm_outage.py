"""LLM outages through the real `OpenAILLM` (openai SDK) and `Conversations`, against the fake OpenAI server
on 127.0.0.1: timeouts, 500s, 429s, garbage bodies and cut streams. The player gets a clear message,
nothing they wrote is lost, and the next message works once the model is back.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.llm.openai_llm import OpenAILLM
from tests.fakes.openai_server import FakeOpenAIServer, fault, reply
from tests.support.reliability import load_history, say

THREAD = "console:outage"
QUESTION = "ORD001 배송 언제 와요?"
LATER = "그럼 ORD001 다시 확인해 주세요"
ANSWER = "ORD001 주문은 배송 지연 상태입니다. 출고되면 바로 알려 드리겠습니다."
LOOKUP = reply(tool_calls=[{"name": "lookup_order", "arguments": {"order_id": "ORD001"}}])
"""The questions name ORD001: the engine wants its lookup before an answer (issue 28)."""
OUTAGE_TEXT = "AI 모델에 연결할 수 없어"
"""The engine's Korean apology when the model cannot be reached (bot/engine/agent.py `say_llm_error`)."""

LOOP_FAULTS = {
    "timeout": fault("hang", seconds=30),
    "http_500": fault("500"),
    "http_429": fault("429", retry_after=0.05),
    "garbage_body": fault("garbage"),
}


LLM_TIMEOUT = 2.0
"""Seconds per model call: well under a hang (30 s, ended when the fake server stops), and enough for
a call that succeeds on a loaded 2-core machine (0.5 s left little room)."""


def _llm(server: FakeOpenAIServer, *, retries: int = 0) -> OpenAILLM:
    return OpenAILLM(
        "fake-model",
        base_url=server.base_url,
        api_key="sk-test-outage",
        timeout=LLM_TIMEOUT,
        max_retries=retries,
    )


def _user_texts(history: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in history if m["role"] == "user"]


@pytest.mark.parametrize("kind", list(LOOP_FAULTS))
async def test_model_outage_gets_a_clear_apology_keeps_the_message_and_recovers(
    app_factory, seeded_store, kind
):
    async with FakeOpenAIServer([LOOP_FAULTS[kind]]) as server:
        llm = _llm(server)
        app = await app_factory(lambda: llm)

        outcome, surface = await say(app, QUESTION, thread=THREAD)
        assert outcome.kind == "answered"
        assert OUTAGE_TEXT in surface.all_text
        assert QUESTION in _user_texts(await load_history(seeded_store, THREAD))

        # The model is back: the next message is answered, and the model sees the earlier question too.
        server.enqueue(LOOKUP, reply(ANSWER), reply(ANSWER))
        _, surface = await say(app, LATER, thread=THREAD)
        assert surface.all_text.endswith(ANSWER)
        seen = [m.get("content") for m in server.requests[-2]["messages"] if m["role"] == "user"]
        assert QUESTION in seen and seen[-1] == LATER
    await llm.close()


async def test_outage_after_a_tool_ran_says_what_was_done_and_keeps_the_history_valid(
    app_factory, seeded_store
):
    async with FakeOpenAIServer(
        [reply(tool_calls=[{"name": "lookup_order", "arguments": {"order_id": "ORD001"}}]), fault("500")]
    ) as server:
        llm = _llm(server)
        app = await app_factory(lambda: llm)
        _, surface = await say(app, QUESTION, thread=THREAD)
        assert OUTAGE_TEXT in surface.all_text
        # what ran, in the player's words for the tool (the output guard's, `Tool.player_name`)
        assert "주문 조회" in surface.all_text and "lookup_order" not in surface.all_text

        server.enqueue(LOOKUP, reply(ANSWER), reply(ANSWER))
        _, surface = await say(app, LATER, thread=THREAD)
        assert surface.all_text.endswith(ANSWER)
        # The API accepted the history (the fake records it) and the tool call has its result in it.
        messages = server.requests[-2]["messages"]
        calls = [tc["id"] for m in messages for tc in m.get("tool_calls") or []]
        results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
        assert calls and calls == results
    await llm.close()


async def test_a_429_burst_within_the_retry_budget_is_invisible_to_the_player(app_factory):
    async with FakeOpenAIServer(
        [fault("429", retry_after=0.05), fault("429", retry_after=0.05), LOOKUP, reply(ANSWER), reply(ANSWER)]
    ) as server:
        llm = _llm(server, retries=2)
        app = await app_factory(lambda: llm)
        _, surface = await say(app, QUESTION, thread=THREAD)
        assert surface.all_text.endswith(ANSWER)
        assert OUTAGE_TEXT not in surface.all_text
    await llm.close()


@pytest.mark.parametrize("stream_fault", [fault("500"), fault("garbage"), fault("hang", seconds=30)])
async def test_a_broken_answer_stream_falls_back_to_the_loop_answer(app_factory, seeded_store, stream_fault):
    async with FakeOpenAIServer([LOOKUP, reply(ANSWER), stream_fault]) as server:
        llm = _llm(server)
        app = await app_factory(lambda: llm)
        _, surface = await say(app, QUESTION, thread=THREAD)
        assert surface.all_text.endswith(ANSWER)
        history = await load_history(seeded_store, THREAD)
        assert history[-1] == {"role": "assistant", "content": ANSWER}
    await llm.close()


async def test_a_stream_cut_mid_answer_never_leaves_the_player_with_a_fragment(app_factory, seeded_store):
    # The synthesis stream dies after a few characters. What the player reads at the end must be a whole
    # answer (the loop's answer or the full synthesis), not the first few characters of it.
    async with FakeOpenAIServer(
        [LOOKUP, reply(ANSWER), {**fault("cut", after_chunks=3), "content": ANSWER}], chunk_chars=3
    ) as server:
        llm = _llm(server)
        app = await app_factory(lambda: llm)
        _, surface = await say(app, QUESTION, thread=THREAD)
        final = list(surface.messages.values())[-1]
        assert final == ANSWER or OUTAGE_TEXT in final, f"the player was left with {final!r}"
    await llm.close()
