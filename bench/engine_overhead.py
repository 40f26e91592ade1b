"""Engine overhead: what the ReAct loop itself costs per iteration and per run.

Scripted runs (3 tool calls + a final answer + synthesis) on an instant ScriptedLLM with no-op tools,
every message persisted through ThreadMemory into a temp SQLite file as in production. Whatever time
passes is the engine's: prompt building, event emission, tool dispatch, the database writes.

    python bench/engine_overhead.py [--runs 200] [--mode native|json|both]

Prints a table and `overhead_per_iteration_us_p50=N`, `overhead_per_iteration_us_p95=N`,
`overhead_per_run_us_p50=N`, `overhead_per_run_us_p95=N`; `main(argv)` returns the same figures as a dict.

When `langgraph` is installed (the `anchor` extra), LangGraph's prebuilt agent runs the same scripted run
in the same process, each of its runs interleaved with one of ours (so machine noise hits both alike), and
the bench also prints `langgraph_per_run_us_p50=N` and `engine_vs_langgraph_per_run_ratio=N` (ours ÷ theirs;
`--no-anchor` skips it), and the same ratio in process CPU per run (`engine_vs_langgraph_cpu_ratio`: the
time either side waited for a core of a busy machine is not in it).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

if __package__ in (None, ""):  # `python bench/engine_overhead.py` from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import langgraph_anchor
from bot.engine import ReActAgent
from bot.llm import ScriptedLLM
from bot.memory import ThreadMemory
from bot.store import Store
from tools.base import Actor, ToolContext, ToolRegistry, ToolResult, tool

RUNS_PER_THREAD = 10
"""Threads grow like real ones: a few runs each, the history loaded and extended every run."""


class _OrderArgs(BaseModel):
    order_id: str = Field(description="Order id, e.g. ORD001")


@tool(name="lookup_order")
async def _lookup(args: _OrderArgs, ctx: ToolContext) -> ToolResult:
    """Look up an order (no-op for the benchmark)."""
    return ToolResult(True, "OK", f"주문 {args.order_id}: 한정판 굿즈, 39,000원, 배송 지연")


@tool(name="list_my_orders")
async def _orders(args: _OrderArgs, ctx: ToolContext) -> ToolResult:
    """List orders (no-op for the benchmark)."""
    return ToolResult(True, "OK", "ORD001 배송 지연, ORD002 배송 완료")


@tool(name="search_policy")
async def _policy(args: _OrderArgs, ctx: ToolContext) -> ToolResult:
    """Search the policies (no-op for the benchmark)."""
    return ToolResult(True, "OK", "배송 지연 보상: 최대 20,000원")


STEPS: list[dict[str, Any]] = [
    {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
    {"tool": "list_my_orders", "args": {"order_id": "ORD001"}},
    {"tool": "search_policy", "args": {"order_id": "ORD001"}},
    {"final": "ORD001은 배송 지연 상태이며 최대 20,000원 보상이 가능합니다."},
    {"answer": "**ORD001**은 배송 지연 상태입니다. 보상은 최대 20,000원까지 가능합니다."},
]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _bench_mode(
    mode: str, runs: int, warmup: int, db_path: Path, *, anchor: bool = False
) -> dict[str, list[float]]:
    lg = langgraph_anchor.Anchor() if anchor else None
    anchor_runs: list[float] = []
    cpu_runs: list[float] = []
    anchor_cpu: list[float] = []
    store = Store(f"sqlite+aiosqlite:///{db_path}")
    await store.open()
    memory = ThreadMemory(store)
    tools = ToolRegistry([_lookup, _orders, _policy])
    per_iteration: list[float] = []
    per_run: list[float] = []
    try:
        for n in range(warmup + runs):
            llm = ScriptedLLM(STEPS, mode=mode)
            agent = ReActAgent(llm, tools)
            ctx = ToolContext(
                actor=Actor(discord_id="9001", player_id="P100"),
                thread_id=f"bench:{mode}:{n // RUNS_PER_THREAD}",
                run_id=f"run{n}",
                store=store,
            )
            marks: list[float] = []

            def on_event(event: Any, marks: list[float] = marks) -> None:
                if event.type == "thinking" and event.status == "start":
                    marks.append(time.perf_counter())

            cpu = time.process_time()
            started = time.perf_counter()
            result = await agent.run(
                "ORD001 배송이 늦어요. 보상 되나요?", ctx, memory=memory, on_event=on_event
            )
            loop_end = time.perf_counter()
            answer = "".join([d async for d in agent.stream_answer(result)])
            await memory.append_assistant(ctx.thread_id, answer, run_id=ctx.run_id)
            finished = time.perf_counter()
            cpu_used = time.process_time() - cpu
            lg_cpu = time.process_time()
            lg_elapsed = await lg.run_once(n) if lg is not None else None
            lg_cpu = time.process_time() - lg_cpu
            if n < warmup:
                continue
            marks.append(loop_end)
            per_iteration += [(b - a) * 1e6 for a, b in itertools.pairwise(marks)]
            per_run.append((finished - started) * 1e6)
            cpu_runs.append(cpu_used * 1e6)
            if lg_elapsed is not None:
                anchor_runs.append(lg_elapsed)
                anchor_cpu.append(lg_cpu * 1e6)
    finally:
        await store.close()
    return {
        "iteration": per_iteration,
        "run": per_run,
        "anchor": anchor_runs,
        "cpu": cpu_runs,
        "anchor_cpu": anchor_cpu,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--mode", choices=("native", "json", "both"), default="both")
    parser.add_argument("--no-anchor", action="store_true", help="skip LangGraph's prebuilt agent")
    args = parser.parse_args(argv)
    anchor = not args.no_anchor and langgraph_anchor.available()
    modes = ["native", "json"] if args.mode == "both" else [args.mode]

    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="arca-bench-") as tmp:
        for mode in modes:
            results[mode] = asyncio.run(
                _bench_mode(
                    mode, args.runs, args.warmup, Path(tmp) / f"{mode}.db", anchor=anchor and mode == "native"
                )
            )

    print(f"{'mode':<8}{'runs':>6}{'iter p50 µs':>14}{'iter p95 µs':>14}{'run p50 µs':>13}{'run p95 µs':>13}")
    for mode, r in results.items():
        print(
            f"{mode:<8}{len(r['run']):>6}{_pct(r['iteration'], 0.5):>14.0f}{_pct(r['iteration'], 0.95):>14.0f}"
            f"{_pct(r['run'], 0.5):>13.0f}{_pct(r['run'], 0.95):>13.0f}"
        )
    iterations = [v for r in results.values() for v in r["iteration"]]
    runs = [v for r in results.values() for v in r["run"]]
    figures: dict[str, Any] = {
        "overhead_per_iteration_us_p50": round(statistics.median(iterations)),
        "overhead_per_iteration_us_p95": round(_pct(iterations, 0.95)),
        "overhead_per_run_us_p50": round(statistics.median(runs)),
        "overhead_per_run_us_p95": round(_pct(runs, 0.95)),
        "modes": {
            mode: {
                "iteration_us_p50": round(_pct(r["iteration"], 0.5)),
                "iteration_us_p95": round(_pct(r["iteration"], 0.95)),
                "run_us_p50": round(_pct(r["run"], 0.5)),
            }
            for mode, r in results.items()
        },
    }
    keys = [
        "overhead_per_iteration_us_p50",
        "overhead_per_iteration_us_p95",
        "overhead_per_run_us_p50",
        "overhead_per_run_us_p95",
    ]
    lg_runs = [v for r in results.values() for v in r["anchor"]]
    if lg_runs:
        # Ours against theirs on the same runs: the native mode, interleaved run by run.
        ours = statistics.median(results["native"]["run"])
        figures["langgraph_per_run_us_p50"] = round(statistics.median(lg_runs))
        figures["langgraph_per_run_us_p95"] = round(_pct(lg_runs, 0.95))
        figures["engine_native_per_run_us_p50"] = round(ours)
        figures["engine_vs_langgraph_per_run_ratio"] = round(ours / statistics.median(lg_runs), 3)
        # The same in process CPU (every thread: the SQLite writer's included): waiting for a core of a
        # busy machine is not in it, so it moves less with the load than the wall ratio does.
        cpu = statistics.median(results["native"]["cpu"])
        figures["engine_cpu_us_per_run_p50"] = round(cpu)
        figures["langgraph_cpu_us_per_run_p50"] = round(statistics.median(results["native"]["anchor_cpu"]))
        figures["engine_vs_langgraph_cpu_ratio"] = round(
            cpu / statistics.median(results["native"]["anchor_cpu"]), 3
        )
        keys += [
            "langgraph_per_run_us_p50",
            "engine_vs_langgraph_per_run_ratio",
            "engine_cpu_us_per_run_p50",
            "langgraph_cpu_us_per_run_p50",
            "engine_vs_langgraph_cpu_ratio",
        ]
    for key in keys:
        print(f"{key}={figures[key]}")
    return figures


if __name__ == "__main__":
    main()
