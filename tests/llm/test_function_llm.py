"""The function model: every answer comes from a function of the request."""

from __future__ import annotations

import asyncio
import json

import pytest

from bot.llm import (
    LLM,
    FunctionLLM,
    LLMError,
    LLMResult,
    ModelRequest,
    ScriptedLLM,
    around,
    forward,
    forward_stream,
)

MESSAGES = [{"role": "user", "content": "ORD001?"}]


async def collect(stream) -> list[str]:
    return [piece async for piece in stream]


async def test_a_sync_function_answers_chat_and_a_text_becomes_the_content() -> None:
    llm = FunctionLLM(lambda request: f"{request.purpose}: {request.messages[-1]['content']}")
    assert isinstance(llm, LLM)
    result = await llm.chat(
        MESSAGES, tools=[{"type": "function"}], tool_choice="auto", purpose="select_tools"
    )
    assert result == LLMResult(content="select_tools: ORD001?")
    assert llm.requests == [
        ModelRequest(MESSAGES, "select_tools", [{"type": "function"}], "auto", None, stream=False)
    ]


async def test_an_async_function_may_return_a_result_or_raise() -> None:
    async def answer(request: ModelRequest) -> LLMResult:
        await asyncio.sleep(0)
        if request.purpose == "compact":
            raise LLMError("summary model down")
        return LLMResult(content="ok", finish_reason="stop")

    llm = FunctionLLM(answer, abilities={"tool_call": False})
    assert (await llm.chat(MESSAGES)).finish_reason == "stop"
    with pytest.raises(LLMError, match="summary model down"):
        await llm.chat(MESSAGES, purpose="compact")
    assert llm.abilities["tool_call"] is False and llm.abilities["context_window"] == 32_000


async def test_a_stream_yields_the_function_content_or_the_stream_function_deltas() -> None:
    plain = FunctionLLM(lambda request: "지연된 주문입니다.")
    assert await collect(plain.stream_chat(MESSAGES)) == ["지연된 주문입니다."]
    assert plain.requests[0].stream and plain.requests[0].purpose == "synthesis"

    async def pieces(request: ModelRequest):
        for piece in ("지연", "된 주문"):
            yield piece

    chunked = FunctionLLM(lambda request: "unused", stream_function=pieces)
    assert await collect(chunked.stream_chat(MESSAGES)) == ["지연", "된 주문"]


async def test_forwarding_hands_a_request_to_another_model_unchanged() -> None:
    script = ScriptedLLM([{"final": "초안"}, {"answer": "최종 답변"}])

    async def answer(request: ModelRequest) -> LLMResult:
        return await forward(script, request)

    llm = FunctionLLM(answer, stream_function=lambda request: forward_stream(script, request))
    assert json.loads((await llm.chat(MESSAGES)).content or "")["answer"] == "초안"
    assert "".join(await collect(llm.stream_chat(MESSAGES))) == "최종 답변"
    assert script.calls == {"loop": 1, "synthesis": 1}


async def test_around_runs_its_hook_before_every_call_and_may_refuse_one() -> None:
    script = ScriptedLLM([{"final": "초안"}, {"answer": "최종 답변"}], mode="json")
    seen: list[str] = []

    async def before(request: ModelRequest) -> None:
        seen.append(request.purpose)
        if request.purpose == "compact":
            raise LLMError("summary model down")

    llm = around(script, before)
    assert llm.abilities == script.abilities
    with pytest.raises(LLMError):
        await llm.chat(MESSAGES, purpose="compact")
    assert json.loads((await llm.chat(MESSAGES)).content or "")["answer"] == "초안"
    assert "".join(await collect(llm.stream_chat(MESSAGES))) == "최종 답변"
    assert seen == ["compact", "loop", "synthesis"] and script.calls == {"loop": 1, "synthesis": 1}
