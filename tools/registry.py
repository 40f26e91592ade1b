"""`build_registry`: the agent tools in one `ToolRegistry`, in the order the model sees them."""

from __future__ import annotations

from tools.base import Tool, ToolRegistry
from tools.coupons import issue_coupon
from tools.escalate import escalate_to_staff
from tools.incident_status import incident_status
from tools.orders import list_my_orders, lookup_order


def build_registry(policy_tool: Tool | None = None) -> ToolRegistry:
    """lookup_order, list_my_orders, issue_coupon, search_policy (when available), escalate_to_staff,
    incident_status (issue 25)."""
    if policy_tool is None:
        try:
            # Imported lazily: the knowledge base (Chroma, embedder) is another component and may be absent.
            from tools.policy_search import search_policy_tool
        except ImportError:
            search_policy_tool = None
        policy_tool = search_policy_tool
    tools: list[Tool] = [lookup_order, list_my_orders, issue_coupon]
    if policy_tool is not None:
        tools.append(policy_tool)
    tools.append(escalate_to_staff)
    tools.append(incident_status)
    return ToolRegistry(tools)
