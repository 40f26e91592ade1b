"""OpenAILLM through the real openai SDK against the fake server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json

import pytest
from openai import AsyncOpenAI

from bot.llm import LLMError, OpenAILLM
from tests.eventually import eventually
from tests.fakes.openai_server import FakeOpenAIServer, fault, reply

KEY = "sk-test-SECRETKEY-1234567890"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "Look up an order",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
]


def make_llm(server: FakeOpenAIServer, **kw) -> OpenAILLM:
    kw.setdefault("timeout", 15.0)  # only the test of the timeout itself wants it to fire (it sets 0.3 s)
    kw.setdefault("max_retries", 0)
    return OpenAILLM("fake-model", base_url=server.base_url, api_key=KEY, **kw)


async def test_plain_chat_returns_content_usage_and_strips_engine_keys(fake_openai):
    fake_openai.enqueue(reply("안녕하세요", usage={"prompt_tokens": 12, "completion_tokens": 3}))
    llm = make_llm(fake_openai)
    result = await llm.chat([{"role": "user", "content": "hi", "pinned": True, "_id": 4}])
    assert result.content == "안녕하세요"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (12, 3)
    assert fake_openai.requests[0]["messages"] == [{"role": "user", "content": "hi"}]
    assert fake_openai.requests[0]["model"] == "fake-model"


async def test_tools_tool_choice_and_response_format_are_sent(fake_openai):
    fake_openai.enqueue(
        reply(
            None, tool_calls=[{"id": "call_1", "name": "lookup_order", "arguments": {"order_id": "ORD001"}}]
        )
    )
    fake_openai.enqueue(reply('{"a": 1}'))
    llm = make_llm(fake_openai)
    forced = {"type": "function", "function": {"name": "lookup_order"}}
    result = await llm.chat([{"role": "user", "content": "x"}], tools=TOOLS, tool_choice=forced)
    assert result.tool_calls[0].id == "call_1"
    assert result.tool_calls[0].name == "lookup_order"
    assert json.loads(result.tool_calls[0].arguments) == {"order_id": "ORD001"}
    await llm.chat([{"role": "user", "content": "x"}], response_format={"type": "json_object"})
    first, second = fake_openai.requests
    assert first["tools"] == TOOLS and first["tool_choice"] == forced
    assert second["response_format"] == {"type": "json_object"} and "tools" not in second


async def test_reasoning_content_is_passed_through(fake_openai):
    fake_openai.enqueue(reply("answer", reasoning_content="먼저 주문을 확인해야 한다"))
    result = await make_llm(fake_openai).chat([{"role": "user", "content": "x"}])
    assert result.reasoning_content == "먼저 주문을 확인해야 한다"


async def test_streaming_yields_deltas_and_records_usage(fake_openai):
    fake_openai.enqueue(reply("한도는 20,000원입니다.", usage={"prompt_tokens": 30, "completion_tokens": 7}))
    llm = make_llm(fake_openai)
    deltas = [d async for d in llm.stream_chat([{"role": "user", "content": "x"}])]
    assert len(deltas) > 1
    assert "".join(deltas) == "한도는 20,000원입니다."
    assert llm.usage.prompt_tokens == 30 and llm.usage.completion_tokens == 7
    assert fake_openai.requests[0]["stream"] is True


async def test_cumulative_usage_adds_up_over_calls(fake_openai):
    fake_openai.enqueue(reply("a", usage={"prompt_tokens": 10, "completion_tokens": 1}))
    fake_openai.enqueue(reply("b", usage={"prompt_tokens": 20, "completion_tokens": 2}))
    llm = make_llm(fake_openai)
    await llm.chat([{"role": "user", "content": "x"}])
    await llm.chat([{"role": "user", "content": "y"}])
    assert (llm.usage.prompt_tokens, llm.usage.completion_tokens, llm.calls) == (30, 3, 2)


async def test_fake_server_streams_tool_call_deltas_split_over_chunks(fake_openai):
    args = {"order_id": "ORD001", "amount": 20000}
    fake_openai.enqueue(reply(None, tool_calls=[{"id": "call_s", "name": "issue_coupon", "arguments": args}]))
    client = AsyncOpenAI(api_key=KEY, base_url=fake_openai.base_url, max_retries=0)
    stream = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}], stream=True, tools=TOOLS
    )
    pieces, name, call_id = [], None, None
    async for chunk in stream:
        for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            call_id = tc.id or call_id
            if tc.function and tc.function.name:
                name = tc.function.name
            if tc.function and tc.function.arguments:
                pieces.append(tc.function.arguments)
    await client.close()
    assert len(pieces) > 1
    assert (call_id, name, json.loads("".join(pieces))) == ("call_s", "issue_coupon", args)


async def test_429_is_retried_after_retry_after(fake_openai):
    fake_openai.enqueue(fault("429", retry_after=0.05), reply("ok after retry"))
    result = await make_llm(fake_openai, max_retries=2).chat([{"role": "user", "content": "x"}])
    assert result.content == "ok after retry"
    assert len(fake_openai.requests) == 2


async def test_500_after_retries_raises_llm_error_with_status(fake_openai):
    fake_openai.enqueue(fault("500"), fault("500"))
    with pytest.raises(LLMError) as err:
        await make_llm(fake_openai, max_retries=1).chat([{"role": "user", "content": "x"}])
    assert err.value.status_code == 500
    assert len(fake_openai.requests) == 2
    assert KEY not in str(err.value)


async def test_hang_longer_than_timeout_raises_timeout_llm_error(fake_openai):
    fake_openai.enqueue(fault("hang", seconds=10))
    with pytest.raises(LLMError) as err:
        await make_llm(fake_openai, timeout=0.3).chat([{"role": "user", "content": "x"}])
    assert err.value.kind == "timeout"
    assert KEY not in str(err.value)


async def test_garbage_body_raises_llm_error_without_the_key(fake_openai):
    fake_openai.enqueue(fault("garbage"))
    with pytest.raises(LLMError) as err:
        await make_llm(fake_openai).chat([{"role": "user", "content": "x"}])
    assert err.value.kind == "bad_response"
    assert KEY not in str(err.value) and "SECRETKEY" not in repr(err.value)


async def test_stream_cut_midway_raises_llm_error(fake_openai):
    fake_openai.enqueue(fault("cut", after_chunks=2) | {"content": "abcdefghijklmnop"})
    llm = make_llm(fake_openai)
    received = []
    with pytest.raises(LLMError):
        async for delta in llm.stream_chat([{"role": "user", "content": "x"}]):
            received.append(delta)
    assert "".join(received) != "abcdefghijklmnop"


async def test_a_stream_read_no_further_closes_its_connection_so_the_server_stops_generating(fake_openai):
    fake_openai.enqueue(reply("가" * 600, chunk_delay=0.01))  # 200 chunks, ~2 s
    stream = make_llm(fake_openai).stream_chat([{"role": "user", "content": "x"}])
    assert [await anext(stream), await anext(stream)] == ["가" * 3, "가" * 3]
    await stream.aclose()  # what the answer's time budget does when it runs out
    await eventually(lambda: fake_openai.abandoned_streams, what="the server to see the stream abandoned")
    assert fake_openai.abandoned_streams == 1


async def test_unreachable_endpoint_raises_connection_error_without_key():
    llm = OpenAILLM("m", base_url="http://127.0.0.1:9/v1", api_key=KEY, timeout=1.0, max_retries=0)
    with pytest.raises(LLMError) as err:
        await llm.chat([{"role": "user", "content": "x"}])
    assert err.value.kind in ("connection", "timeout")
    assert KEY not in str(err.value)


async def test_model_without_streaming_ability_streams_one_chat_reply(fake_openai):
    fake_openai.enqueue(reply("whole answer"))
    llm = make_llm(fake_openai, abilities={"streaming": False})
    assert [d async for d in llm.stream_chat([{"role": "user", "content": "x"}])] == ["whole answer"]
    assert "stream" not in fake_openai.requests[0]


async def test_fake_server_runs_as_a_standalone_process(tmp_path):
    import socket
    import sys

    script = tmp_path / "replies.json"
    script.write_text(json.dumps([reply("from the subprocess")]), encoding="utf-8")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.fakes.openai_server",
        "--port",
        str(port),
        "--script",
        str(script),
        stdout=asyncio.subprocess.PIPE,
        cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]),
    )
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), 20)
        assert f"127.0.0.1:{port}" in line.decode()
        llm = OpenAILLM("m", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, timeout=5, max_retries=0)
        assert (await llm.chat([{"role": "user", "content": "x"}])).content == "from the subprocess"
    finally:
        proc.terminate()
        await proc.wait()
