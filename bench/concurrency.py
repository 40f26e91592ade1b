"""Concurrency: N conversations at once through `Conversations` (real SQLite ledger, real policy index with
the e5 embedder) on a model that takes 50 ms per call, against one conversation alone.

Each conversation searches the policies, looks up its own order, issues a coupon and answers (4 loop
calls + 1 streamed synthesis = 250 ms of model latency). A watchdog task measures event-loop lag every
10 ms: a stall over 50 ms means something (embedding, SQLite, the engine) blocked the loop.

Every run is a correct grounded run, as the engine requires since issue 28: it looks the order up before
it states anything about it, and the order id and the amount it uses are the ones the player wrote (a
call with the tool's example amount is refused before it runs). Each run's script is chosen by the order
id in its player's message, not by the order runs ask for a model (under a burst that order is not the
arrival order). `tests/bench/test_concurrency_bench.py` runs this routine on a few conversations.

    python -m bench.concurrency [--conversations 200] [--latency-ms 50]

Prints a table and `concurrency_wall_ratio=N`, and `idle_loop_max_lag_ms=N`: the worst lag of the same loop
watched for `IDLE_S` with nothing to run, the machine's own share of any lag; `main(argv)` returns the
figures as a dict.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import re
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.sampler import sampled
from bot.app import build_app, make_policy_index
from bot.config import Settings, load_settings
from bot.conversations import Incoming
from bot.conversations.surface import ChannelTraits, SurfaceBase
from bot.heap import FULL_COLLECTION_EVERY
from bot.llm.function import FunctionLLM, ModelRequest, forward, forward_stream
from bot.llm.scripted import ScriptedLLM
from bot.store import Order, Player, Store

STALL_MS = 50.0
TICK_S = 0.010
IDLE_S = 3.0
"""Seconds the loop is watched with nothing to run before the burst: the machine's own jitter (a loop with
no work woken late by the host), printed beside the burst's lag so that runs on different days and
machines can be told apart (2026-12-03: up to 9.6 ms on a day the burst's lag was 14–45 ms against 11–20 ms
the day before on the same code)."""
QUERIES = [
    "배송이 늦으면 보상 받을 수 있나요?",
    "환불은 언제까지 되나요?",
    "계정 연동은 어떻게 하나요?",
    "점검 보상은 언제 지급돼요?",
    "How do refunds work?",
    "What happens if my delivery is late?",
    "중복 결제가 됐어요",
    "선물한 아이템을 돌려받을 수 있나요?",
]


COUPON_AMOUNT = 5000
"""What every bench player asks for, in writing (the engine refuses an amount the player did not write)."""
_ORDER_ID = re.compile(r"ORD(\d{5})")


def player_message(i: int) -> str:
    """Conversation `i`'s message: its own order id and the amount it asks for."""
    return f"ORD{i:05d} 배송이 늦어요. {COUPON_AMOUNT}원 보상 쿠폰 부탁드려요"


def conversation_of(messages: list[dict[str, Any]]) -> int:
    """Which conversation a request belongs to: the order id in its player's latest message."""
    for message in reversed(messages):
        if message.get("role") == "user":
            found = _ORDER_ID.search(str(message.get("content") or ""))
            if found:
                return int(found.group(1))
    raise LookupError("no bench order id in the player's message")


def latency_llm(*, latency: float, marks: list[float] | None = None) -> FunctionLLM:
    """One run's model: the script of the conversation whose player wrote the request's order id, with a
    network-like latency before every call (loop; synthesis: first token). `marks`, when given, gets the
    time each call starts waiting and the time its wait ends (`bench.lone`)."""
    scripted: ScriptedLLM | None = None

    def model_for(request: ModelRequest) -> ScriptedLLM:
        nonlocal scripted
        if scripted is None:
            scripted = ScriptedLLM(_script(conversation_of(request.messages)))
        return scripted

    async def wait() -> None:
        if marks is not None:
            marks.append(time.perf_counter())
        await asyncio.sleep(latency)
        if marks is not None:
            marks.append(time.perf_counter())

    async def answer(request: ModelRequest) -> Any:
        await wait()
        return await forward(model_for(request), request)

    async def stream(request: ModelRequest) -> Any:
        await wait()
        async for piece in forward_stream(model_for(request), request):
            yield piece

    return FunctionLLM(answer, stream_function=stream, abilities=ScriptedLLM().abilities)


class NullSurface(SurfaceBase):
    """A channel that shows nothing and costs nothing (the streaming bench measures the surface)."""

    traits = ChannelTraits(max_chars=2000)

    async def send(self, text: str) -> int:
        return 0

    async def edit(self, handle: Any, text: str) -> None:
        return None

    async def react(self, ref: Any, emoji: str) -> None:
        return None


class LoopWatchdog:
    """Sleeps `TICK_S` in a loop and records how late each wake-up was."""

    def __init__(self) -> None:
        self.lags_ms: list[float] = []
        self.late: list[tuple[float, float]] = []
        """(when the wake-up was due, when it came) for each tick later than `STALL_MS` / 5 (perf_counter)."""
        self.started = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        self.started = time.perf_counter()
        while True:
            start = time.perf_counter()
            await asyncio.sleep(TICK_S)
            woke = time.perf_counter()
            lag = (woke - start - TICK_S) * 1000
            self.lags_ms.append(lag)
            if lag > STALL_MS / 5:
                self.late.append((start + TICK_S, woke))

    def __enter__(self) -> LoopWatchdog:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()

    @property
    def stalls(self) -> int:
        return sum(1 for lag in self.lags_ms if lag > STALL_MS)

    @property
    def max_lag_ms(self) -> float:
        return max(self.lags_ms, default=0.0)


def thread_cpu_s() -> Counter[str]:
    """CPU seconds each kind of thread of this process has used so far: `MainThread` (the loop), the
    search workers (`policy-index-search`), the SQLite writer, … (a pool's threads summed under its
    prefix). A thread that ended is no longer counted, so take the difference around a phase whose
    threads live on."""
    used: Counter[str] = Counter()
    for thread in threading.enumerate():
        if thread.ident is None:
            continue
        try:
            clock = time.pthread_getcpuclockid(thread.ident)
            seconds = time.clock_gettime(clock)
        except (OSError, AttributeError):  # the thread ended meanwhile, or no per-thread clocks here
            continue
        name, _, suffix = thread.name.rpartition("_")
        used[name if name and suffix.isdigit() else thread.name] += seconds
    return used


@contextlib.contextmanager
def full_collections() -> Any:
    """The pauses (ms) of the cyclic collector's full collections while the block runs: each stops the
    loop for its whole walk of the heap (start-up's heap is frozen out of it: `bot.heap`)."""
    pauses: list[float] = []
    started = 0.0

    def timed(phase: str, info: dict[str, Any]) -> None:
        nonlocal started
        if phase == "start":
            started = time.perf_counter()
        elif info["generation"] == 2:
            pauses.append((time.perf_counter() - started) * 1000)

    gc.callbacks.append(timed)
    try:
        yield pauses
    finally:
        gc.callbacks.remove(timed)


def settle_heap() -> None:
    """What the bench's set-up built (the policy index, the app, the ledger) collected and frozen out of
    the collector's walks, and full collections spaced out, as a serving process's start-up does
    (`bot.heap.freeze_startup_heap`).

    `build_app` does that once per process only, when nothing was frozen before: in `bench.run_all`,
    which freezes the earlier benches' heap first, this bench's index and app stayed in the collector's
    reach and full collections came at CPython's default pace, so one walked them in the middle of the
    burst (quiet run 2026-12-07: 87.6 ms of a worst lag of 124.7 ms; run_all's order again at load 6:
    93.3 ms)."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)


def _script(i: int) -> list[dict[str, Any]]:
    order = f"ORD{i:05d}"
    return [
        {"tool": "search_policy", "args": {"query": QUERIES[i % len(QUERIES)] + f" ({i % 64})"}},
        {"tool": "lookup_order", "args": {"order_id": order}},
        {"tool": "issue_coupon", "args": {"order_id": order, "amount": COUPON_AMOUNT, "reason": "배송 지연"}},
        {"final": f"{order} 주문에 {COUPON_AMOUNT:,}원 쿠폰을 발급했습니다."},
    ]


async def _seed(store: Store, n: int) -> None:
    async with store.session() as s:
        s.add_all(Player(id=f"B{i:05d}", discord_id=str(500_000 + i), name=f"bench{i}") for i in range(n))
        await s.flush()
        s.add_all(
            Order(id=f"ORD{i:05d}", player_id=f"B{i:05d}", status="delayed", item="한정판 굿즈", amount=39000)
            for i in range(n)
        )
        await s.commit()


def expected_answer(i: int) -> str:
    return f"ORD{i:05d} 주문에 {COUPON_AMOUNT:,}원 쿠폰을 발급했습니다."


def check_outcome(i: int, outcome: Any) -> None:
    """A conversation that did not end as scripted stops the bench (its figures would time something else)."""
    runs = outcome.runs
    stop = runs[-1].stopped_reason if runs else None
    if outcome.kind != "answered" or outcome.answer != expected_answer(i):
        raise RuntimeError(
            f"conversation {i} ended as {outcome.kind} (stop reason {stop}): {outcome.answer!r}"
        )


async def _round(app: Any, ids: range) -> tuple[float, list[float]]:
    conv = app.conversations
    actors = [await conv.resolve_actor(str(500_000 + i)) for i in ids]
    latencies: list[float] = []

    async def one(i: int, actor: Any) -> None:
        start = time.perf_counter()
        outcome = await conv.handle(Incoming(f"console:bench-{i}", actor, player_message(i)), NullSurface())
        check_outcome(i, outcome)
        latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    # Every conversation finishes before a failure is raised: the store is not closed under running ones.
    ended = await asyncio.gather(
        *(one(i, a) for i, a in zip(ids, actors, strict=True)), return_exceptions=True
    )
    wall = time.perf_counter() - start
    failed = [e for e in ended if isinstance(e, BaseException)]
    if failed:
        raise RuntimeError(
            f"{len(failed)} of {len(ended)} conversations failed; first: {failed[0]}"
        ) from failed[0]
    return wall, latencies


MODEL_CALLS = 5
"""Model calls of one conversation (4 loop calls + the streamed synthesis): its model latency is 5 × that of
one call."""


async def run(
    n: int,
    latency: float,
    data_dir: Path,
    *,
    policy_index: Any = None,
    watch: list[LoopWatchdog] | None = None,
    idle_s: float = IDLE_S,
    profile: Path | None = None,
) -> dict[str, Any]:
    """The burst's figures. `policy_index`: an index already built (a test's); None builds the settings'
    index into `data_dir` and closes it after. `watch` receives the burst's watchdog (`bench.loop_stalls`
    reads its late wake-ups). `idle_s`: how long the idle loop is watched first (`IDLE_S`). `profile`: a
    folder where py-spy's top frames of the lone conversation and of the burst are written
    (`bench.sampler`).

    One conversation runs first, alone, and is timed apart (`first_conversation_s`: the first use of each
    statement, connection and code path); then one more alone (`single_wall_s`, the steady cost), then
    the burst."""
    settings: Settings = load_settings(data_dir=data_dir, llm_concurrency=max(n, 1), edit_interval=0.0)
    db = data_dir / "concurrency.db"
    for stale in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        stale.unlink(missing_ok=True)  # a data dir reused for its policy index starts a fresh ledger
    store = Store(f"sqlite+aiosqlite:///{db}")
    await store.open()
    await _seed(store, n + 2)
    index = policy_index or await asyncio.to_thread(make_policy_index, settings)
    app = await build_app(
        settings, llm_factory=lambda: latency_llm(latency=latency), store=store, policy_index=index
    )
    try:
        await index.search("warm-up", 3)  # loads the model and the lexical index outside the timing
        settle_heap()
        with LoopWatchdog() as idle_dog:
            await asyncio.sleep(idle_s)
        first_wall, _ = await _round(app, range(n + 1, n + 2))
        before = store.counts()
        async with sampled("one_conversation", profile):
            with LoopWatchdog() as solo_dog:
                cpu = time.process_time()
                solo_wall, _ = await _round(app, range(n, n + 1))
                solo_cpu = time.process_time() - cpu
        solo_counts = store.counts() - before
        before = store.counts()
        async with sampled(f"burst_{n}", profile):
            with LoopWatchdog() as dog, full_collections() as collections:
                cpu, threads = time.process_time(), thread_cpu_s()
                wall, latencies = await _round(app, range(n))
                burst_cpu = time.process_time() - cpu
                threads = thread_cpu_s() - threads
        burst_counts = store.counts() - before
        if watch is not None:
            watch.append(dog)
    finally:
        await store.close()
        if policy_index is None:
            index.close()
    latencies.sort()
    solo, burst = solo_counts.per(1), burst_counts.per(n)
    return {
        "conversations": n,
        "llm_latency_ms": round(latency * 1000),
        "first_conversation_s": round(first_wall, 3),
        "single_wall_s": round(solo_wall, 3),
        "single_above_model_ms": round((solo_wall - MODEL_CALLS * latency) * 1000, 1),
        "concurrent_wall_s": round(wall, 3),
        "concurrency_wall_ratio": round(wall / solo_wall, 2),
        "conversation_p50_s": round(statistics.median(latencies), 3),
        "conversation_p95_s": round(latencies[int(0.95 * (len(latencies) - 1))], 3),
        "conversations_per_s": round(n / wall, 1),
        "single_cpu_ms": round(solo_cpu * 1000, 1),
        "burst_cpu_ms_per_conversation": round(burst_cpu * 1000 / n, 1),
        "burst_loop_cpu_ms_per_conversation": round(threads["MainThread"] * 1000 / n, 2),
        "burst_search_cpu_ms_per_conversation": round(threads["policy-index-search"] * 1000 / n, 2),
        "burst_writer_cpu_ms_per_conversation": round(threads["arca-sqlite-writer"] * 1000 / n, 2),
        "loop_stalls_over_50ms": dog.stalls,
        "loop_max_lag_ms": round(dog.max_lag_ms, 1),
        "loop_stalls_single": solo_dog.stalls,
        "idle_loop_max_lag_ms": round(idle_dog.max_lag_ms, 1),
        "loop_max_lag_above_idle_ms": round(dog.max_lag_ms - idle_dog.max_lag_ms, 1),
        "burst_full_collections": len(collections),
        "burst_full_collection_max_ms": round(max(collections, default=0.0), 1),
        "single_statements": solo["statements"],
        "single_commits": solo["commits"],
        "single_write_units": solo["writes"],
        "single_write_wait_ms": solo["write_wait_ms"],
        "burst_statements_per_conversation": burst["statements"],
        "burst_commits_per_conversation": burst["commits"],
        "burst_write_wait_ms_per_conversation": burst["write_wait_ms"],
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--data-dir", type=Path, help="reuse a data dir (its policy index is built once)")
    parser.add_argument(
        "--profile", type=Path, help="write py-spy's top frames of the lone conversation and the burst here"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="arca-bench-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        data_dir.mkdir(parents=True, exist_ok=True)
        figures = asyncio.run(run(args.conversations, args.latency_ms / 1000, data_dir, profile=args.profile))
    print(
        f"{'conversations':<16}{'wall s':>9}{'1 alone s':>11}{'ratio':>8}{'p50 s':>8}{'p95 s':>8}{'stalls>50ms':>13}{'max lag ms':>12}"
    )
    print(
        f"{figures['conversations']:<16}{figures['concurrent_wall_s']:>9}{figures['single_wall_s']:>11}"
        f"{figures['concurrency_wall_ratio']:>8}{figures['conversation_p50_s']:>8}{figures['conversation_p95_s']:>8}"
        f"{figures['loop_stalls_over_50ms']:>13}{figures['loop_max_lag_ms']:>12}"
    )
    keys = (
        "concurrency_wall_ratio",
        "loop_stalls_over_50ms",
        "loop_max_lag_ms",
        "conversations_per_s",
        "idle_loop_max_lag_ms",
        "loop_max_lag_above_idle_ms",
        "burst_full_collections",
        "burst_full_collection_max_ms",
        "first_conversation_s",
        "single_cpu_ms",
        "burst_cpu_ms_per_conversation",
        "burst_loop_cpu_ms_per_conversation",
        "burst_search_cpu_ms_per_conversation",
        "burst_writer_cpu_ms_per_conversation",
        "single_above_model_ms",
        "single_statements",
        "single_commits",
        "single_write_units",
        "single_write_wait_ms",
        "burst_statements_per_conversation",
        "burst_commits_per_conversation",
        "burst_write_wait_ms_per_conversation",
    )
    for key in keys:
        print(f"{key}={figures[key]}")
    return figures


if __name__ == "__main__":
    main()
