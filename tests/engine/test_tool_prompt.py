"""JSON mode's tool descriptions: name, one line of purpose, an example `args` object, typed fields —
never a raw JSON schema a small model would copy into its arguments."""

from __future__ import annotations

import json

import pytest

from bot.engine.prompts import loop_system_prompt
from bot.engine.tool_prompt import describe_tools, example_args, example_call, player_values
from bot.llm import ScriptedLLM
from tests.support.engine import run_scripted
from tools.registry import build_registry

PLAYER = "ORD101 배송이 너무 늦어요. 보상 쿠폰 만원 받을 수 있을까요?"


def test_each_tool_has_a_purpose_line_an_example_args_object_and_typed_fields():
    text = describe_tools(build_registry())
    assert '"properties"' not in text and '"required"' not in text
    assert (
        "- lookup_order: Look up one of the player's orders by the order number they wrote (ORD and digits)"
        in text
    )
    assert 'args example: {"order_id": "ORD…"}' in text  # visibly a placeholder, never a real-looking id
    assert 'args example: {"order_id": "ORD…", "amount": 5000}' in text
    assert "ORD001" not in text
    assert "- amount (integer, required):" in text and "- reason (string, optional):" in text
    for line in text.splitlines():
        if "args example:" in line:
            assert isinstance(json.loads(line.split("args example:", 1)[1]), dict)


def test_example_values_are_filled_from_what_the_player_wrote():
    registry = build_registry()
    assert example_args(registry.get("lookup_order"), [PLAYER]) == {"order_id": "ORD101"}
    assert example_args(registry.get("issue_coupon"), [PLAYER]) == {"order_id": "ORD101", "amount": 10000}
    assert example_args(registry.get("issue_coupon"), ["ord007 please, 3,000원"]) == {
        "order_id": "ORD007",
        "amount": 3000,
    }
    assert example_args(registry.get("issue_coupon"), ["nothing here"]) == {
        "order_id": "ORD…",
        "amount": 5000,
    }
    assert example_args(registry.get("issue_coupon"), ["ORD101 만원"])["amount"] == 10000
    action = json.loads(example_call(registry.get("lookup_order"), [PLAYER], json_mode=True))
    assert action == {"action": "tool_call", "tool": "lookup_order", "args": {"order_id": "ORD101"}}


def test_json_mode_prompt_is_smaller_than_with_raw_schemas():
    registry = build_registry()
    old = loop_system_prompt(None, json_tools=registry.prompt_descriptions())
    new = loop_system_prompt(None, json_tools=describe_tools(registry))
    assert len(new) < len(old) * 0.85


async def test_json_mode_system_prompt_uses_the_example_shaped_descriptions(tools):
    run = await run_scripted([], tools, llm=ScriptedLLM([{"final": "ok"}], mode="json"), synthesize=False)
    system = run.llm.requests[0].messages[0]["content"]
    assert 'args example: {"order_id": "ORD001"}' in system and '"properties"' not in system


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("ORD101 배송이 너무 늦어요. 보상 쿠폰 만원 받을 수 있을까요?", "ids ORD101; amount 10000"),
        ("ORD101 2만원 보상 쿠폰 발급해 주세요", "ids ORD101; amount 20000"),
        ("My order ord301 is late, can I get 5,000 won?", "ids ORD301; amount 5000"),
    ],
)
def test_json_mode_names_the_values_of_the_players_message(query, expected):
    assert expected in (player_values(query) or "")


def test_a_message_without_ids_or_amounts_adds_nothing():
    assert player_values("How many compensation coupons can I get per day?") is None
    assert player_values("오늘 점심 뭐 먹을까요?") is None


@pytest.mark.parametrize("mode", ["native", "json"])
async def test_the_values_reach_the_json_mode_prompt_only(tools, mode):
    run = await run_scripted(
        [{"final": "확인했습니다"}], tools, mode=mode, query="ORD101 보상 쿠폰 만원 받을 수 있을까요?"
    )
    system = next(r for r in run.llm.requests if r.purpose == "loop").messages[0]["content"]
    assert ("amount 10000" in system) is (mode == "json")


def test_the_search_query_is_shown_as_a_placeholder_and_filled_with_the_players_words():
    from tools.policy_search import QUERY_PLACEHOLDER

    registry = build_registry()
    text = describe_tools(registry)
    assert f'args example: {{"query": "{QUERY_PLACEHOLDER}"}}' in text
    assert "쿠폰 한도" not in text  # a real topic here is what a small model searched for every question
    question = "How many days do I have to get a refund for an unused cash shop item?"
    assert example_args(registry.get("search_policy"), ["hi", question]) == {"query": question}
