"""build_registry: the five tools, side effects marked, the policy tool optional."""

from __future__ import annotations

from pydantic import BaseModel

from tools.base import ResultCode, ToolContext, ToolResult, tool
from tools.registry import build_registry

from .conftest import UNLINKED


class _QueryArgs(BaseModel):
    query: str


@tool(name="search_policy")
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
    ]
    assert {n for n in reg.names if reg.is_side_effect(n)} == {"issue_coupon", "escalate_to_staff"}


def test_registry_builds_without_the_policy_tool() -> None:
    reg = build_registry()
    assert {"lookup_order", "list_my_orders", "issue_coupon", "escalate_to_staff"} <= set(reg.names)


def test_unlinked_users_see_only_policy_search_and_escalation() -> None:
    reg = build_registry(policy_tool=_fake_policy)
    assert reg.for_actor(UNLINKED).names == ["search_policy", "escalate_to_staff"]


def test_issue_coupon_schema_has_a_plain_integer_amount() -> None:
    schema = build_registry().get("issue_coupon").openai_schema()["function"]["parameters"]
    assert schema["properties"]["amount"]["type"] == "integer"
    assert "minimum" not in schema["properties"]["amount"] and "maximum" not in schema["properties"]["amount"]
    assert {"order_id", "amount"} <= set(schema["required"])
