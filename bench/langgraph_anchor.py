"""The anchor for the engine's per-run cost: LangGraph's prebuilt `create_react_agent` on the same scripted run.

The same three no-op tools and the same final answer as `bench/engine_overhead.py` (3 tool calls + an
answer), an instant scripted chat model (async, no thread hop) and LangGraph's in-memory checkpointer;
threads grow like ours (10 runs each, the history checkpointed and reloaded every run). Needs the optional
`anchor` extra (`pip install -e '.[anchor]'`); without `langgraph` it prints a note and returns `{}`.

    python bench/langgraph_anchor.py [--runs 200]

Prints `langgraph_per_run_us_p50=N` and `langgraph_per_run_us_p95=N`; `main(argv)` returns the figures.
`measure(runs, warmup)` runs it inside a running event loop (the engine bench calls it in the same
process, interleaved with its own runs, so both figures come from one sitting).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import warnings
from typing import Any

RUNS_PER_THREAD = 10
QUERY = "ORD001 배송이 늦어요. 보상 되나요?"
STEPS: list[tuple[str, dict[str, Any]] | str] = [
    ("lookup_order", {"order_id": "ORD001"}),
    ("list_my_orders", {"order_id": "ORD001"}),
    ("search_policy", {"order_id": "ORD001"}),
    "**ORD001**은 배송 지연 상태입니다. 보상은 최대 20,000원까지 가능합니다.",
]


def available() -> bool:
    try:
        import langgraph.prebuilt  # noqa: F401
    except ImportError:
        return False
    return True


def _build() -> tuple[Any, Any]:
    """The compiled agent and a factory of scripted models (one script per run)."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import create_react_agent

    @tool
    async def lookup_order(order_id: str) -> str:
        """Look up an order (no-op for the benchmark)."""
        return f"주문 {order_id}: 한정판 굿즈, 39,000원, 배송 지연"

    @tool
    async def list_my_orders(order_id: str) -> str:
        """List orders (no-op for the benchmark)."""
        return "ORD001 배송 지연, ORD002 배송 완료"

    @tool
    async def search_policy(order_id: str) -> str:
        """Search the policies (no-op for the benchmark)."""
        return "배송 지연 보상: 최대 20,000원"

    class ScriptedChat(BaseChatModel):
        """Answers with the next scripted step, natively async (no executor hop)."""

        step: int = 0
        run: int = 0

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
            return self

        def _next(self) -> ChatResult:
            item = STEPS[self.step % len(STEPS)]
            self.step += 1
            if isinstance(item, str):
                message = AIMessage(content=item)
            else:
                name, args = item
                call_id = f"call_{self.step}_{time.perf_counter_ns()}"
                message = AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])
            return ChatResult(generations=[ChatGeneration(message=message)])

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> ChatResult:
            return self._next()

        async def _agenerate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> ChatResult:
            return self._next()

    model = ScriptedChat()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is "deprecated" in favour of langchain's
        agent = create_react_agent(
            model, [lookup_order, list_my_orders, search_policy], checkpointer=InMemorySaver()
        )
    return agent, model


class Anchor:
    """One compiled LangGraph agent; `run_once(n)` times run n (thread n // 10) in µs."""

    def __init__(self) -> None:
        self.agent, self.model = _build()

    async def run_once(self, n: int) -> float:
        config = {"configurable": {"thread_id": f"anchor:{n // RUNS_PER_THREAD}"}}
        self.model.step = 0
        started = time.perf_counter()
        out = await self.agent.ainvoke({"messages": [("user", QUERY)]}, config=config)
        elapsed = (time.perf_counter() - started) * 1e6
        if not out["messages"][-1].content.startswith("**ORD001**"):
            raise RuntimeError("the anchor run did not end with the scripted answer")
        return elapsed


async def measure(runs: int, warmup: int = 10) -> list[float]:
    anchor = Anchor()
    per_run: list[float] = []
    for n in range(warmup + runs):
        elapsed = await anchor.run_once(n)
        if n >= warmup:
            per_run.append(elapsed)
    return per_run


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args(argv)
    if not available():
        print("langgraph is not installed (pip install -e '.[anchor]'): no anchor figure")
        return {}
    per_run = asyncio.run(measure(args.runs, args.warmup))
    figures = {
        "langgraph_per_run_us_p50": round(statistics.median(per_run)),
        "langgraph_per_run_us_p95": round(_pct(per_run, 0.95)),
    }
    for key, value in figures.items():
        print(f"{key}={value}")
    return figures


if __name__ == "__main__":
    main()
