"""build_registry: the five tools, side effects marked, the policy tool optional."""

from __future__ import annotations

from pydantic import BaseModel

from bot.conversations.renderer import status_text
from tests.support.context import STAFF, UNLINKED
from tools.base import ResultCode, ToolContext, ToolResult, tool
from tools.ops_readonly import order_stats
from tools.registry import build_registry


class _QueryArgs(BaseModel):
    query: str


@tool(name="search_policy", allowed_unlinked=True)
async def _fake_policy(args: _QueryArgs, ctx: ToolContext) -> ToolResult:
    """Search policies (stand-in for the knowledge-base tool)."""
    return ToolResult(True, ResultCode.OK, "no hits")


def test_registry_holds_the_tools_in_order_with_side_effects_marked() -> None:
    reg = build_registry(policy_tool=_fake_policy)
    assert reg.names == [
        "lookup_order",
        "list_my_orders",
        "issue_coupon",
        "search_policy",
        "escalate_to_staff",
        "incident_status",
    ]
    assert {n for n in reg.names if reg.is_side_effect(n)} == {"issue_coupon", "escalate_to_staff"}


def test_registry_builds_without_the_policy_tool() -> None:
    reg = build_registry()
    assert {"lookup_order", "list_my_orders", "issue_coupon", "escalate_to_staff"} <= set(reg.names)


def test_unlinked_users_may_run_only_the_tools_that_declare_it() -> None:
    reg = build_registry(policy_tool=_fake_policy)
    unlinked = ["search_policy", "escalate_to_staff", "incident_status"]
    assert [t.name for t in reg if reg.allowed(t.name, UNLINKED)] == unlinked
    assert [t.name for t in reg if t.allowed_unlinked] == unlinked


def test_unlinked_users_still_see_player_tools_so_a_call_can_say_how_to_link() -> None:
    reg = build_registry(policy_tool=_fake_policy).subset(["lookup_order", "search_policy"])
    reg.register(order_stats)
    assert reg.visible_to(UNLINKED).names == ["lookup_order", "search_policy"]
    assert reg.visible_to(STAFF).names == ["lookup_order", "search_policy", "order_stats"]


def test_each_tool_declares_its_status_line_in_both_languages() -> None:
    reg = build_registry(policy_tool=_fake_policy)
    assert reg.status_line("lookup_order", "ko") == "주문 정보를 확인하고 있어요"
    assert reg.status_line("issue_coupon", "en") == "Checking your compensation coupon"
    assert reg.status_line("escalate_to_staff", "ko") == "담당자에게 연결하고 있어요"
    assert reg.status_line("no_such_tool", "en") == reg.status_line(None, "en") == "Working on it…"
    assert status_text("list_my_orders", "en", reg) == "⏳ Checking your orders"


def test_issue_coupon_schema_has_a_plain_integer_amount() -> None:
    schema = build_registry().get("issue_coupon").openai_schema()["function"]["parameters"]
    assert schema["properties"]["amount"]["type"] == "integer"
    assert "minimum" not in schema["properties"]["amount"] and "maximum" not in schema["properties"]["amount"]
    assert {"order_id", "amount"} <= set(schema["required"])


def test_audit_label_of_a_web_visitor_names_the_visitor_not_a_missing_discord_id() -> None:
    from tools.base import Actor

    assert Actor(None, display_name="web:v-1a2b").label == "web:v-1a2b"
    assert Actor("9001").label == "discord:9001"
    assert Actor("9001", player_id="P100").label == "player:P100"


def test_a_schema_handed_to_one_run_can_be_changed_without_touching_the_next_runs():
    from tools.registry import build_registry

    t = build_registry().get("issue_coupon")
    assert t is not None
    first = t.openai_schema()
    first["function"]["parameters"]["properties"]["amount"]["type"] = "string"
    first["function"]["parameters"]["required"].append("bogus")
    again = t.openai_schema()
    assert again["function"]["parameters"]["properties"]["amount"]["type"] == "integer"
    assert "bogus" not in again["function"]["parameters"]["required"]
