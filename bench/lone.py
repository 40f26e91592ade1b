"""One conversation alone, many times: the steady figure behind `bench.concurrency`'s `single_above_model_ms`.

`bench.concurrency` times one conversation alone once, between its warm-up and its burst: on a shared
machine one sample moves by ±10 ms from run to run, more than the changes it judges. This runs the same
conversation (`bench.concurrency`'s app, ledger, model of 50 ms a call and policy index) `--conversations`
times one after another, each by a new player, and prints the median of their time above the model's
(5 calls × the latency), its quartiles, each thread's CPU per conversation (the loop, the search
workers, the SQLite reader and writer), and where on the conversation's own path that time goes: the
median gap before the first model call (`gap_0_ms`: intake, thread, incidents), between one call's
answer and the next call (`gap_1_ms`…: the tool steps; the first tool searches the policies, e5 included),
before the streamed answer's call, and after it (`gap_5_ms`: the final check, the stored answer and the
run's analytics), and how late the model's 50 ms waits wake up in all (`model_wait_late_ms`: the loop
busy with other work of the run, or the host).

    python -m bench.lone [--conversations 30] [--latency-ms 50] [--profile DIR]
    python -m bench.lone --base DIR [--rounds 4]

`--profile DIR` samples all the conversations together with py-spy (`bench.sampler`, DIR/lone.txt): one
conversation gives a few dozen samples, too few to rank frames. `--base DIR` is an A/B run: DIR is another
checkout of the project (the code before a change, e.g. `git worktree add` or `git archive | tar -x`);
each round runs this bench once in each checkout's code, in turn, in child processes on one data dir,
then the median of each side's medians is printed with the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    if os.environ.get("ARCA_BENCH_TREE"):  # an A/B child: the checkout under test's code comes first
        sys.path.insert(0, os.environ["ARCA_BENCH_TREE"])

from bench.concurrency import MODEL_CALLS, _round, _seed, latency_llm, settle_heap, thread_cpu_s
from bench.sampler import sampled
from bot.app import build_app, make_policy_index
from bot.config import load_settings
from bot.store import Store

THREADS = ("MainThread", "policy-index-search", "arca-sqlite-reader", "arca-sqlite-writer")


async def run(
    n: int, latency: float, data_dir: Path, *, policy_index: Any = None, profile: Path | None = None
) -> dict[str, Any]:
    """`n` conversations, one at a time after one untimed (the first use of every path), each its own
    player's first. `policy_index`: an index already built (a test's); None builds the settings' index
    into `data_dir` and closes it after."""
    settings = load_settings(data_dir=data_dir, llm_concurrency=4, edit_interval=0.0)
    db = data_dir / "lone.db"
    for stale in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        stale.unlink(missing_ok=True)
    store = Store(f"sqlite+aiosqlite:///{db}")
    await store.open()
    await _seed(store, n + 1)
    index = policy_index or await asyncio.to_thread(make_policy_index, settings)
    marks: list[float] = []
    app = await build_app(
        settings,
        llm_factory=lambda: latency_llm(latency=latency, marks=marks),
        store=store,
        policy_index=index,
    )
    above: list[float] = []
    gaps: list[list[float]] = []
    late: list[float] = []
    try:
        await index.search("warm-up", 3)
        settle_heap()
        await _round(app, range(n, n + 1))
        before = store.counts()
        async with sampled("lone", profile):
            cpu, threads = time.process_time(), thread_cpu_s()
            for i in range(n):
                marks.clear()
                start = time.perf_counter()
                wall, _ = await _round(app, range(i, i + 1))
                points = [start, *marks, start + wall]
                above.append((wall - MODEL_CALLS * latency) * 1000)
                # (start, call 1), (back 1, call 2), … (back 5, end): ours; (call, back): the model's wait
                gaps.append([(b - a) * 1000 for a, b in zip(points[::2], points[1::2], strict=True)])
                late.append(sum(b - a - latency for a, b in zip(marks[::2], marks[1::2], strict=True)) * 1000)
            cpu, threads = time.process_time() - cpu, thread_cpu_s() - threads
        counts = (store.counts() - before).per(n)
    finally:
        await store.close()
        if policy_index is None:
            index.close()
    above.sort()
    quartiles = statistics.quantiles(above, n=4) if n > 1 else [above[0]] * 3
    return {
        "conversations": n,
        "above_model_ms_p50": round(quartiles[1], 1),
        "above_model_ms_p25": round(quartiles[0], 1),
        "above_model_ms_p75": round(quartiles[2], 1),
        **{f"gap_{k}_ms": round(statistics.median(g[k] for g in gaps), 2) for k in range(len(gaps[0]))},
        "model_wait_late_ms": round(statistics.median(late), 2),
        "cpu_ms_per_conversation": round(cpu * 1000 / n, 1),
        **{f"{name}_cpu_ms": round(threads[name] * 1000 / n, 2) for name in THREADS},
        "statements": counts["statements"],
        "commits": counts["commits"],
        "write_units": counts["writes"],
        "write_wait_ms": counts["write_wait_ms"],
    }


def _child(tree: Path, n: int, latency_ms: float, data_dir: Path) -> dict[str, Any]:
    """This bench in `tree`'s code, in a fresh process; its figures."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--json", "--conversations", str(n)]
    argv += ["--latency-ms", str(latency_ms), "--data-dir", str(data_dir)]
    env = {**os.environ, "ARCA_BENCH_TREE": str(tree.resolve())}
    done = subprocess.run(argv, env=env, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"the bench failed in {tree}:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def ab(base: Path, rounds: int, n: int, latency_ms: float) -> None:
    here = Path(__file__).resolve().parents[1]
    sides = {"base": base, "new": here}
    got: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
    with tempfile.TemporaryDirectory(prefix="arca-lone-") as tmp:
        for r in range(rounds):
            # The side that goes first alternates: a machine getting busier favours neither.
            for name in sides if r % 2 == 0 else reversed(sides):
                figures = _child(sides[name], n, latency_ms, Path(tmp))
                got[name].append(figures)
                load = os.getloadavg()[0]
                print(f"round {r + 1} {name:<5} load {load:4.2f}  " + json.dumps(figures), flush=True)
    print(f"\nmedians of {rounds} rounds × {n} conversations, load now {os.getloadavg()[0]:.2f}:")
    keys = [k for k in got["base"][0] if k != "conversations"]
    print(f"{'figure':<28}{'base':>10}{'new':>10}{'new/base':>10}")
    for key in keys:
        a = statistics.median(f[key] for f in got["base"])
        b = statistics.median(f[key] for f in got["new"])
        ratio = f"{b / a:.3f}" if a else "-"
        print(f"{key:<28}{a:>10.2f}{b:>10.2f}{ratio:>10}")


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=30)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--data-dir", type=Path, help="reuse a data dir (its policy index is built once)")
    parser.add_argument("--profile", type=Path, help="write py-spy's top frames of the conversations here")
    parser.add_argument("--base", type=Path, help="A/B against this checkout's code")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args(argv)
    if args.base is not None:
        ab(args.base, args.rounds, args.conversations, args.latency_ms)
        return None
    with tempfile.TemporaryDirectory(prefix="arca-lone-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        data_dir.mkdir(parents=True, exist_ok=True)
        figures = asyncio.run(run(args.conversations, args.latency_ms / 1000, data_dir, profile=args.profile))
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key}={value}")
        print(f"load_average={os.getloadavg()[0]:.2f}")
    return figures


if __name__ == "__main__":
    main()
