"""ScriptedLLM: step rendering in both modes, bookkeeping, and loud failure on invalid histories."""

from __future__ import annotations

import json

import pytest

from bot.llm import ScriptedLLM, ScriptExhausted, ScriptViolation, validate_history

USER = {"role": "user", "content": "hi"}
TOOLS = [{"type": "function", "function": {"name": "lookup_order", "parameters": {"type": "object"}}}]


async def test_tool_step_renders_native_tool_calls_in_native_mode():
    llm = ScriptedLLM([{"tool": "lookup_order", "args": {"order_id": "ORD001"}}], mode="native")
    result = await llm.chat([USER], tools=TOOLS)
    assert result.content is None
    assert [c.name for c in result.tool_calls] == ["lookup_order"]
    assert json.loads(result.tool_calls[0].arguments) == {"order_id": "ORD001"}


async def test_tool_step_renders_json_action_in_json_mode():
    llm = ScriptedLLM([{"tool": "lookup_order", "args": {"order_id": "ORD001"}}], mode="json")
    result = await llm.chat([USER])
    assert result.tool_calls == []
    assert json.loads(result.content) == {
        "action": "tool_call",
        "tool": "lookup_order",
        "args": {"order_id": "ORD001"},
        "reasoning": "",
    }


async def test_final_and_raw_steps_render_per_mode():
    native = ScriptedLLM([{"final": "끝"}, {"raw": "not json"}], mode="native")
    assert (await native.chat([USER], tools=TOOLS)).content == "끝"
    assert (await native.chat([USER], tools=TOOLS)).content == "not json"
    js = ScriptedLLM([{"final": "끝"}, {"raw": "not json"}], mode="json")
    assert json.loads((await js.chat([USER])).content)["action"] == "final_answer"
    assert (await js.chat([USER])).content == "not json"


async def test_multi_call_step_is_one_response_natively_and_consecutive_calls_in_json_mode():
    steps = [{"tools": [{"tool": "a", "args": {}}, {"tool": "b", "args": {}}]}, {"final": "done"}]
    native = ScriptedLLM(steps, mode="native")
    assert [c.name for c in (await native.chat([USER], tools=TOOLS)).tool_calls] == ["a", "b"]
    assert native.steps_served == 1 and native.current_step == 0

    js = ScriptedLLM(steps, mode="json")
    first = json.loads((await js.chat([USER])).content)
    assert (first["tool"], js.current_step, js.pending_calls_in_step) == ("a", 0, 1)
    second = json.loads((await js.chat([USER])).content)
    assert (second["tool"], js.current_step, js.pending_calls_in_step) == ("b", 0, 0)
    assert js.steps_served == 1
    assert json.loads((await js.chat([USER])).content)["action"] == "final_answer"
    assert js.current_step == 1 and js.unused_steps == []


async def test_asking_for_more_loop_steps_than_scripted_raises_and_is_recorded():
    llm = ScriptedLLM([{"final": "x"}])
    await llm.chat([USER])
    with pytest.raises(ScriptExhausted):
        await llm.chat([USER])
    assert llm.exhausted and llm.violations


def test_unused_steps_lists_loop_steps_not_served_but_not_the_answer():
    llm = ScriptedLLM([{"final": "x"}, {"answer": "y"}])
    assert llm.unused_steps == [0]


async def test_user_message_between_tool_calls_and_results_is_a_violation():
    history = [
        USER,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}],
        },
        {"role": "user", "content": "interrupt!"},
        {"role": "tool", "tool_call_id": "c1", "content": "late"},
    ]
    llm = ScriptedLLM([{"final": "x"}])
    with pytest.raises(ScriptViolation, match="between an assistant's tool_calls"):
        await llm.chat(history)
    assert llm.violations


async def test_tool_result_for_unknown_call_id_is_a_violation():
    history = [
        USER,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "?"},
    ]
    with pytest.raises(ScriptViolation, match="not a pending tool call"):
        await ScriptedLLM([{"final": "x"}]).chat(history)


async def test_duplicate_tool_call_ids_are_a_violation():
    call = {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}
    history = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "1"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "2"},
    ]
    with pytest.raises(ScriptViolation, match="repeats tool call id"):
        await ScriptedLLM([{"final": "x"}]).chat(history)


async def test_engine_bookkeeping_keys_sent_to_the_model_are_a_violation():
    with pytest.raises(ScriptViolation, match="keys the API does not accept"):
        await ScriptedLLM([{"final": "x"}]).chat([{"role": "user", "content": "x", "pinned": True}])


async def test_tool_call_ids_differ_between_instances_serving_one_thread():
    a = await ScriptedLLM([{"tool": "t"}]).chat([USER], tools=TOOLS)
    b = await ScriptedLLM([{"tool": "t"}]).chat([USER], tools=TOOLS)
    assert a.tool_calls[0].id != b.tool_calls[0].id


async def test_synthesis_streams_the_answer_step_in_chunks_else_the_last_final():
    with_answer = ScriptedLLM([{"final": "draft"}, {"answer": "최종 답변입니다. 20,000원"}], chunk_size=4)
    pieces = [p async for p in with_answer.stream_chat([USER])]
    assert len(pieces) > 1 and "".join(pieces) == "최종 답변입니다. 20,000원"
    without = ScriptedLLM([{"final": "first"}, {"final": "last final"}])
    assert "".join([p async for p in without.stream_chat([USER])]) == "last final"


async def test_select_tools_default_prefers_scripted_tools_then_fills_to_six():
    catalogue = "\n".join(f"tool_{i:02d}: does {i}" for i in range(10))
    llm = ScriptedLLM([{"tool": "tool_07"}])
    forced = {"type": "function", "function": {"name": "respond"}}
    result = await llm.chat(
        [{"role": "user", "content": f"Tool catalogue\n{catalogue}"}],
        tools=TOOLS,
        tool_choice=forced,
        purpose="select_tools",
    )
    picked = json.loads(result.tool_calls[0].arguments)["tools"]
    assert picked[0] == "tool_07" and len(picked) == 6


async def test_compact_summary_keeps_exact_ids_and_numbers():
    history = [{"role": "user", "content": "ORD001 주문에 20,000원 쿠폰, 플레이어 P100"}]
    summary = (await ScriptedLLM().chat(history, purpose="compact")).content
    for fact in ("ORD001", "20,000", "P100"):
        assert fact in summary


def test_a_malformed_step_is_rejected():
    with pytest.raises(ValueError):
        ScriptedLLM([{"final": "x", "tool": "y"}])


async def test_a_history_sent_again_with_new_messages_is_checked_as_a_whole_would_be():
    # The double checks only the messages after the ones the previous call sent (the same objects): every
    # call's verdict is still that of the whole history, and a history that is not a continuation (other
    # objects, or shorter) is checked from the start.
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup_order", "arguments": "{}"}}
        ],
    }
    result = {"role": "tool", "tool_call_id": "c1", "content": "[OK]"}
    stray = {"role": "tool", "tool_call_id": "ghost", "content": "[OK]"}
    histories = [
        [USER],
        [USER, call],  # ends with a call without its result
        [USER, call, result],
        [USER, call, result, stray],  # a result for no pending call
        [USER, call, result, stray, dict(USER)],
        [dict(USER), call, result],  # not a continuation: checked afresh
        [USER],  # shorter: checked afresh
        [USER, call, {"role": "user", "content": "또"}, result],
    ]
    llm = ScriptedLLM(answer="ok")
    for history in histories:
        expected = validate_history(history)
        try:
            await llm.chat(history, purpose="compact")
        except ScriptViolation as exc:
            assert expected and str(exc).endswith("; ".join(expected))
        else:
            assert expected == []
    assert len(llm.violations) == 4
