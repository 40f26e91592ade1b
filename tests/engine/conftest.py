"""Engine test fixtures: a small registry of no-op tools with probes, contexts, memory, a queue LLM."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.memory import ThreadMemory
from bot.store import Store
from tests.support.context import make_ctx
from tests.support.engine import PlayerCouponArgs, PlayerOrderArgs, Probe, QueryArgs, make_tools
from tools.base import ToolContext, ToolRegistry, ToolResult, tool
from tools.requirements import each_named_order, on_policy_question


@pytest.fixture
def grounded_tools() -> ToolRegistry:
    """lookup_order, issue_coupon and search_policy with the real tools' declarations of when they must
    run (issue 28), and no example values in their descriptions."""

    @tool(name="lookup_order", required_before_answer=each_named_order)
    async def lookup_order(args: PlayerOrderArgs, ctx: ToolContext) -> ToolResult:
        """Look up one of the player's orders."""
        return ToolResult(
            True, "OK", f"주문 {args.order_id}: 한정판 굿즈, 39,000원, 상태 배송 지연 (delayed)"
        )

    @tool(name="issue_coupon", side_effect=True, counts_as=("lookup_order",))
    async def issue_coupon(args: PlayerCouponArgs, ctx: ToolContext) -> ToolResult:
        """Issue a coupon."""
        return ToolResult(True, "ISSUED", f"{args.order_id}에 {args.amount:,}원 쿠폰 발급")

    @tool(name="search_policy", allowed_unlinked=True, required_before_answer=on_policy_question)
    async def search_policy(args: QueryArgs, ctx: ToolContext) -> ToolResult:
        """Search the policies."""
        return ToolResult(True, "OK", "[보상 정책 §2] 하루 최대 3장까지 발급됩니다.")

    return ToolRegistry([lookup_order, issue_coupon, search_policy])


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def tools(probe: Probe) -> ToolRegistry:
    return make_tools(probe)


@pytest.fixture
def ctx() -> ToolContext:
    return make_ctx()


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Store]:
    s = Store(f"sqlite+aiosqlite:///{tmp_path / 't.db'}")
    await s.open()
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
def memory(db: Store) -> ThreadMemory:
    return ThreadMemory(db)
