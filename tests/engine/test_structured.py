"""structured_llm_call: the native → json_object → text chain, retries, fallbacks, call limits."""

from __future__ import annotations

import re

from pydantic import BaseModel

from bot.engine.structured import REFORMAT_REQUEST, extract_json, structured_llm_call
from bot.llm.base import LLMError, LLMResult, ToolCall, Usage
from tests.support.engine import queued

SCHEMA = {
    "type": "object",
    "properties": {"tools": {"type": "array", "items": {"type": "string"}}},
    "required": ["tools"],
}
MSGS = [{"role": "user", "content": "pick"}]
ALL = {"tool_call": True, "json_mode": True}


def call(args: str) -> LLMResult:
    return LLMResult(tool_calls=[ToolCall("c1", "respond", args)], usage=Usage(5, 2))


async def test_native_level_forces_the_function_and_succeeds_in_one_call():
    llm = queued([call('{"tools": ["a"]}')], abilities=ALL)
    result = await structured_llm_call(llm, MSGS, SCHEMA)
    assert (result.value, result.level_used, result.llm_calls) == ({"tools": ["a"]}, "native", 1)
    assert llm.requests[0].tool_choice == {"type": "function", "function": {"name": "respond"}}
    assert llm.requests[0].tools[0]["function"]["parameters"] == SCHEMA
    assert result.usage.prompt_tokens == 5


async def test_json_mode_level_is_used_when_native_fails_and_retries_once_with_reformat():
    llm = queued([call("not json"), "still not json", '{"tools": ["b"]}'], abilities=ALL)
    result = await structured_llm_call(llm, MSGS, SCHEMA)
    assert (result.value, result.level_used, result.llm_calls) == ({"tools": ["b"]}, "json_mode", 3)
    assert llm.requests[1].response_format == {"type": "json_object"}
    assert llm.requests[2].messages[-1]["content"] == REFORMAT_REQUEST


async def test_plain_text_level_extracts_json_from_prose():
    llm = queued(
        ['Sure! Here you go:\n```json\n{"tools": ["c"]}\n```'],
        abilities={"tool_call": False, "json_mode": False},
    )
    result = await structured_llm_call(llm, MSGS, SCHEMA)
    assert (result.value, result.level_used, result.llm_calls) == ({"tools": ["c"]}, "text", 1)
    assert llm.requests[0].tools is None and llm.requests[0].response_format is None


async def test_regex_fallback_rescues_plain_text():
    llm = queued(
        ["I pick lookup_order and escalate_to_staff"], abilities={"tool_call": False, "json_mode": False}
    )

    def names(text: str):
        return (
            {"tools": re.findall(r"\b(lookup_order|escalate_to_staff)\b", text)} if "pick" in text else None
        )

    result = await structured_llm_call(llm, MSGS, SCHEMA, regex_fallback=names)
    assert result.value == {"tools": ["lookup_order", "escalate_to_staff"]} and result.level_used == "text"


async def test_total_failure_returns_default_after_at_most_five_calls():
    llm = queued(["x"] * 10, abilities=ALL)
    result = await structured_llm_call(llm, MSGS, SCHEMA, default_value={"tools": []})
    assert (result.value, result.level_used, result.llm_calls) == ({"tools": []}, "default", 5)
    assert not result.ok


async def test_levels_are_skipped_by_abilities():
    json_only = queued(["x"] * 10, abilities={"tool_call": False, "json_mode": True})
    assert (await structured_llm_call(json_only, MSGS, SCHEMA)).llm_calls == 4
    assert all(c.tools is None for c in json_only.requests)
    plain = queued(["x"] * 10, abilities={"tool_call": False, "json_mode": False})
    assert (await structured_llm_call(plain, MSGS, SCHEMA)).llm_calls == 2


async def test_parse_fn_rejection_moves_to_the_next_level_and_llm_errors_do_not_escape():
    def only_known(raw):
        if raw["tools"] != ["ok"]:
            raise ValueError("unknown")
        return raw["tools"]

    llm = queued([call('{"tools": ["bad"]}'), LLMError("down"), '{"tools": ["ok"]}'], abilities=ALL)
    result = await structured_llm_call(llm, MSGS, SCHEMA, parse_fn=only_known)
    assert (result.value, result.level_used, result.llm_calls) == (["ok"], "text", 3)


async def test_pydantic_schema_is_validated_and_returned_as_model():
    class Pick(BaseModel):
        tools: list[str]

    llm = queued([call('{"tools": 5}'), '{"tools": ["z"]}'], abilities=ALL)
    result = await structured_llm_call(llm, MSGS, Pick)
    assert isinstance(result.value, Pick) and result.value.tools == ["z"] and result.level_used == "json_mode"


def test_extract_json_finds_objects_in_fences_prose_and_rejects_garbage():
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('text before {"a": {"b": 2}} and after') == {"a": {"b": 2}}
    assert extract_json('```json\n{"k": "v"}\n```') == {"k": "v"}
    assert extract_json('{broken {"ok": true}') == {"ok": True}
    assert extract_json("no json here") is None
    assert extract_json("") is None
