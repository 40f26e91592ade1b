"""Repairs of small-model mistakes: JSON-mode reply parsing (code fence, trailing prose, Python
literals) and call repairs in both modes (name prefixes, arguments as a string, the schema as
arguments); ambiguous replies get a precise hint instead of a guess."""

from __future__ import annotations

import json
import logging

import pytest

from bot.engine import parse_action
from bot.engine.parsing import read_action
from bot.engine.prompts import LOOP_REFORMAT_REQUEST
from bot.llm import validate_history
from bot.llm.base import api_message
from tests.support.engine import MODES, run_scripted

QUERY = "ORD101 배송이 너무 늦어요. 보상 쿠폰 만원 받을 수 있을까요?"
CALL = {"action": "tool_call", "tool": "lookup_order", "args": {"order_id": "ORD101"}}
SCHEMA_ARGS = {
    "properties": {"order_id": {"description": "The order number ...", "type": "string"}},
    "required": ["order_id"],
}


@pytest.mark.parametrize(
    ("raw", "repair"),
    [
        ("```json\n" + json.dumps(CALL) + "\n```", "code fence removed"),
        (
            json.dumps(CALL) + "\nI will now look up the order for you.",
            "trailing prose after the JSON object",
        ),
        (
            "{'action': 'tool_call', 'tool': 'lookup_order', 'args': {'order_id': 'ORD101'}, 'strict': True}",
            "Python literals read as JSON",
        ),
        # Both seen live twice in a row from a 1.5B model, after the hint had said how to write it.
        ('{"action": "lookup_order", "args": {"order_id": "ORD101"}}', "read as a tool call of that tool"),
        (
            '{"action": "search_policy", "tool": "lookup_order", "args": {"order_id": "ORD101"}}',
            '"tool" kept',
        ),
    ],
    ids=["code-fence", "trailing-prose", "python-literals", "tool-as-action", "tool-as-action-and-tool"],
)
async def test_json_mode_repairs_an_unambiguous_reply_runs_the_call_and_logs_it(
    tools, probe, caplog, raw, repair
):
    action = parse_action(raw)
    assert action is not None and (action.tool, action.args["order_id"]) == ("lookup_order", "ORD101")
    assert any(repair in r for r in action.repairs)
    with caplog.at_level(logging.INFO, logger="bot.engine.parsing"):
        run = await run_scripted([{"raw": raw}, {"final": "ok"}], tools, mode="json", query=QUERY)
    assert probe.calls == ["lookup_order:ORD101"] and run.result.codes == ["OK"]
    assert run.result.stopped_reason == "final_answer"
    # logged once, when the loop read the reply (not again when synthesis re-reads the trace)
    assert sum(repair in r.getMessage() for r in caplog.records) == 1
    assert LOOP_REFORMAT_REQUEST not in [m.get("content") for m in run.result.messages]


def test_a_well_formed_reply_needs_no_repair():
    action = parse_action(json.dumps(CALL))
    assert action is not None and action.repairs == []


@pytest.mark.parametrize(
    ("raw", "hint"),
    [
        (json.dumps(CALL) + "\n" + json.dumps({"action": "final_answer", "answer": "x"}), "2 JSON objects"),
        (f"```json\n{json.dumps(CALL)}\n```\n```json\n{json.dumps(CALL)}\n```", "2 code blocks"),
        ('{"action": "look up", "answer": "ORD101"}', '"action" must be "tool_call"'),
        ('{"action": "tool_call", "args": {"order_id": "ORD101"}}', 'needs "tool"'),
        ('{"action": "tool_call", "tool": "lookup_order", "args": {"order_id": ORD101}}', "not valid JSON"),
    ],
    ids=["two-objects", "two-fences", "unknown-action", "no-tool-name", "broken-json"],
)
async def test_json_mode_ambiguous_reply_is_not_guessed_and_gets_a_precise_hint(tools, probe, raw, hint):
    reading = read_action(raw)
    assert reading.action is None and hint in (reading.hint or "")
    run = await run_scripted(
        [{"raw": raw}, {"tool": "lookup_order", "args": {"order_id": "ORD101"}}, {"final": "ok"}],
        tools,
        mode="json",
        query=QUERY,
    )
    reformat = [m["content"] for m in run.result.messages if m["content"].startswith(LOOP_REFORMAT_REQUEST)]
    assert len(reformat) == 1 and hint in reformat[0]
    assert probe.calls == ["lookup_order:ORD101"]  # only the corrected call ran
    assert "Player:" in run.agent.format_trace(run.result.messages)
    assert hint not in run.agent.format_trace(run.result.messages)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("prefix", ["functions.", "tools."])
async def test_tool_name_prefix_is_removed_in_both_modes(tools, probe, caplog, mode, prefix):
    step = {"tool": f"{prefix}lookup_order", "args": {"order_id": "ORD101"}}
    with caplog.at_level(logging.INFO, logger="bot.engine.repairs"):
        run = await run_scripted([step, {"final": "ok"}], tools, mode=mode, query=QUERY)
    assert probe.calls == ["lookup_order:ORD101"]
    assert run.result.tools_called == ["lookup_order"] and run.result.codes == ["OK"]
    assert any("prefix" in r.getMessage() for r in caplog.records)
    assert not validate_history([api_message(m) for m in run.result.messages])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "args",
    [json.dumps({"order_id": "ORD101"}), "{'order_id': 'ORD101'}"],
    ids=["json-string", "python-literal-string"],
)
async def test_arguments_sent_as_a_string_are_decoded_in_both_modes(tools, probe, caplog, mode, args):
    # Native mode: the arguments text is itself a JSON string (double-encoded) or Python literals;
    # JSON mode: `args` is a string holding the object.
    sent = json.dumps(args) if mode == "native" and args.startswith('{"') else args
    with caplog.at_level(logging.INFO, logger="bot.engine"):
        run = await run_scripted(
            [{"tool": "lookup_order", "args": sent}, {"final": "ok"}], tools, mode=mode, query=QUERY
        )
    assert probe.calls == ["lookup_order:ORD101"] and run.result.codes == ["OK"]
    assert any(
        ("JSON string" in m or "Python literals" in m) for m in (r.getMessage() for r in caplog.records)
    )


@pytest.mark.parametrize("mode", MODES)
async def test_schema_as_arguments_says_give_values_with_an_example_from_the_players_message(
    tools, probe, mode
):
    run = await run_scripted(
        [{"tool": "lookup_order", "args": SCHEMA_ARGS}, {"final": "ok"}], tools, mode=mode, query=QUERY
    )
    [outcome] = run.result.tool_outcomes
    assert outcome.result.code == "ERROR" and probe.calls == []
    assert "Give values, not the schema" in outcome.observation
    assert '{"order_id": "ORD101"}' in outcome.observation


async def test_unparseable_arguments_text_stays_an_error_observation(tools, probe):
    run = await run_scripted(
        [{"tool": "lookup_order", "args": "{order_id: ORD101"}, {"final": "ok"}], tools, mode="native"
    )
    assert probe.calls == [] and run.result.codes == ["ERROR"]
    assert "not valid JSON" in run.result.tool_outcomes[0].observation


def test_an_action_that_names_the_same_tool_as_tool_is_read_as_a_tool_call():
    """Seen live (Qwen2.5-Coder-1.5B, JSON mode): this reply twice in a row ended the run as unreadable."""
    from bot.engine.parsing import read_action

    reading = read_action(
        '{"action": "lookup_order", "tool": "lookup_order", "args": {"order_id": "ORD103"}}'
    )
    assert reading.action is not None and reading.action.tool == "lookup_order"
    assert reading.action.args == {"order_id": "ORD103"}
    # A different name in "action": "tool" is the field the format names (seen live twice in a row, the
    # arguments were those of "tool"); without arguments it stays an error.
    other = read_action('{"action": "search_policy", "tool": "lookup_order", "args": {"order_id": "ORD103"}}')
    assert other.action is not None and other.action.tool == "lookup_order"
    assert read_action('{"action": "search_policy", "tool": "lookup_order"}').action is None
