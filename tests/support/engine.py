"""The engine tests' tools and runs: probed no-op tools, argument models, a scripted run with its events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from bot.llm.base import LLMError, LLMResult
from bot.llm.function import FunctionLLM, ModelRequest
from tests.support.context import make_ctx
from tools.base import ToolContext, ToolRegistry, ToolResult, tool


@dataclass
class Probe:
    """What the test tools saw: call order, overlap of side-effect calls, gates for concurrency tests."""

    calls: list[str] = field(default_factory=list)
    side_effect_active: int = 0
    side_effect_overlap: bool = False
    issued: list[tuple[str, int, str]] = field(default_factory=list)
    gate_a: asyncio.Event = field(default_factory=asyncio.Event)
    gate_b: asyncio.Event = field(default_factory=asyncio.Event)
    block: asyncio.Event = field(default_factory=asyncio.Event)
    blocked_started: asyncio.Event = field(default_factory=asyncio.Event)


class OrderArgs(BaseModel):
    order_id: str = Field(description="The order id, e.g. ORD001")


class CouponArgs(BaseModel):
    order_id: str = Field(description="The order id, e.g. ORD001")
    amount: int = Field(description="Amount in KRW, e.g. 5000")


class NoArgs(BaseModel):
    pass


class TextArgs(BaseModel):
    text: str = Field(default="", description="Any text")


def make_tools(probe: Probe) -> ToolRegistry:
    @tool(name="lookup_order")
    async def lookup_order(args: OrderArgs, ctx: ToolContext) -> ToolResult:
        """Look up one of the player's orders by id, e.g. ORD001."""
        probe.calls.append(f"lookup_order:{args.order_id}")
        return ToolResult(True, "OK", f"주문 {args.order_id}: 한정판 굿즈, 39,000원, 상태 delayed(배송 지연)")

    @tool(name="issue_coupon", side_effect=True)
    async def issue_coupon(args: CouponArgs, ctx: ToolContext) -> ToolResult:
        """Issue a compensation coupon for a delayed order."""
        probe.side_effect_active += 1
        if probe.side_effect_active > 1:
            probe.side_effect_overlap = True
        try:
            probe.calls.append(f"issue_coupon:{args.order_id}:{args.amount}")
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            if args.amount > 20_000:
                return ToolResult(
                    False, "AMOUNT_OVER_LIMIT", "1회 한도는 20,000원입니다. 20,000원 이하로 다시 요청하세요."
                )
            probe.issued.append((args.order_id, args.amount, ctx.idempotency_key))
            return ToolResult(True, "ISSUED", f"{args.order_id}에 {args.amount:,}원 쿠폰 발급 (코드 CPN-1)")
        finally:
            probe.side_effect_active -= 1

    @tool(name="wait_a")
    async def wait_a(args: NoArgs, ctx: ToolContext) -> ToolResult:
        """Sets gate A, then waits for gate B (only finishes when run concurrently with wait_b)."""
        probe.gate_a.set()
        await asyncio.wait_for(probe.gate_b.wait(), 2)
        probe.calls.append("wait_a")
        return ToolResult(True, "OK", "a done")

    @tool(name="wait_b")
    async def wait_b(args: NoArgs, ctx: ToolContext) -> ToolResult:
        """Sets gate B, then waits for gate A."""
        probe.gate_b.set()
        await asyncio.wait_for(probe.gate_a.wait(), 2)
        probe.calls.append("wait_b")
        return ToolResult(True, "OK", "b done")

    @tool(name="blocker")
    async def blocker(args: NoArgs, ctx: ToolContext) -> ToolResult:
        """Blocks until the test releases it."""
        probe.blocked_started.set()
        await probe.block.wait()
        return ToolResult(True, "OK", "unblocked")

    @tool(name="boom")
    async def boom(args: NoArgs, ctx: ToolContext) -> ToolResult:
        """Always raises."""
        raise RuntimeError("kaboom")

    @tool(name="big")
    async def big(args: TextArgs, ctx: ToolContext) -> ToolResult:
        """Returns a very long text."""
        return ToolResult(True, "OK", "BIGSTART " + "가나다라 " * 1_500 + " BIGEND")

    @tool(name="report")
    async def report(args: NoArgs, ctx: ToolContext) -> ToolResult:
        """Renders an HTML report."""
        return ToolResult(True, "OK", "<!DOCTYPE html><html><body>" + "<p>row</p>" * 500 + "</body></html>")

    @tool(name="echo")
    async def echo(args: TextArgs, ctx: ToolContext) -> ToolResult:
        """Echo the text back."""
        probe.calls.append(f"echo:{args.text}")
        return ToolResult(True, "OK", f"echo {args.text}")

    return ToolRegistry([lookup_order, issue_coupon, wait_a, wait_b, blocker, boom, big, report, echo])


class PlayerOrderArgs(BaseModel):
    order_id: str = Field(description="The order number the player wrote")


class PlayerCouponArgs(BaseModel):
    order_id: str = Field(description="The order number the player wrote")
    amount: int = Field(description="KRW")


class QueryArgs(BaseModel):
    query: str = Field(description="What to look up")


def _numbered_tool(i: int) -> Any:
    async def fn(args: TextArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(True, "OK", f"tool {i} ran")

    fn.__doc__ = f"Does thing number {i} for the player."
    return tool(name=f"tool_{i:02d}")(fn)


def make_many_tools(n: int) -> ToolRegistry:
    """`n` distinct no-op tools named tool_00 … for the tool-selection threshold."""
    return ToolRegistry(_numbered_tool(i) for i in range(n))


def queued(
    replies: list[LLMResult | Exception | str], *, abilities: dict[str, Any] | None = None
) -> FunctionLLM:
    """A function model that answers each chat call with the next queued result (or raises it); its
    streams yield nothing."""
    queue = list(replies)

    def reply(request: ModelRequest) -> LLMResult | str:
        if not queue:
            raise LLMError("queued model: no reply left")
        nxt = queue.pop(0)
        if isinstance(nxt, Exception):
            raise nxt
        return nxt

    async def silent(request: ModelRequest) -> AsyncIterator[str]:
        return
        yield ""  # pragma: no cover - makes this an async generator

    return FunctionLLM(reply, stream_function=silent, abilities=abilities)


MODES = ["native", "json"]


@dataclass
class Run:
    agent: Any
    llm: Any
    result: Any
    events: list[Any]
    answer: str = ""


async def run_scripted(
    steps: list[dict[str, Any]],
    tools: ToolRegistry,
    *,
    mode: str = "native",
    query: str = "ORD001 배송이 늦어요",
    ctx: ToolContext | None = None,
    llm: Any = None,
    synthesize: bool = True,
    **agent_kwargs: Any,
) -> Run:
    """Run the real agent on a ScriptedLLM and (by default) stream the answer, collecting events."""
    from bot.engine import ReActAgent
    from bot.llm import ScriptedLLM

    llm = llm or ScriptedLLM(steps, mode=mode)
    agent = ReActAgent(llm, tools, **agent_kwargs)
    events: list[Any] = []
    result = await agent.run(query, ctx or make_ctx(), on_event=events.append)
    answer = ""
    if synthesize:
        answer = "".join([d async for d in agent.stream_answer(result, on_event=events.append)])
    return Run(agent, llm, result, events, answer)
