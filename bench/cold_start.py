"""Cold start of the policy search (issue 51): a fresh `arca-bot search` process with the search model
stored beside the index, the same without it (what every start paid before: the domain classifiers and
background vectors fitted by embedding ~600 sentences), and the bot's first player question after its
start-up against the ones after it.

    python bench/cold_start.py [--runs N] [--unstored-runs N] [--skip-unstored] [--against DIR]

Prints `name=value` lines (`cold_search_wall_s=…`, `cold_search_cpu_s=…`, `unstored_search_wall_s=…`,
`first_question_ms=…`, `later_question_ms=…`, `web_healthz_wall_s=…`, …). The goals are a cold search of
at most 3 s on 2 cores and a fresh `arca-bot web` (no LLM, empty data directory) answering `/healthz`
within 10 s;
on a machine shared with other work the wall time grows with the load (printed), the CPU time does not.
The CPU time counts the search's own children (its query's Korean analysis runs in a second process).

`--against DIR`: DIR is another checkout (e.g. `git worktree add /tmp/before main`); the cold searches
alternate between it and this one, each with an index built by its own code, and print `before_…` figures
and `cold_search_wall_over_before` beside this checkout's (one sitting, the same load).
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

from bot.knowledge.fitted import FILE_NAME  # noqa: E402

QUERY = "쿠폰 한도가 얼마예요?"
LATER = [
    "환불은 며칠 안에 신청해야 하나요?",
    "How do I change my nickname?",
    "계정이 정지됐는데 이의 신청은 어떻게 해요?",
    "Is a delayed delivery compensated?",
    "선물한 아이템 취소할 수 있나요?",
]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cli(data_dir: Path, *args: str, repo: Path = REPO) -> tuple[float, float]:
    """(wall s, CPU s) of one `python -m bot …` process of the checkout in `repo`."""
    env = {
        **os.environ,
        "ARCA_DATA_DIR": str(data_dir),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "PYTHONPATH": str(repo),
    }
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bot", *args], cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"`arca-bot {' '.join(args)}` failed:\n{done.stderr[-2000:]}")
    return wall, _children_cpu() - cpu


def _searches(data_dir: Path, runs: int, *, stored: bool) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(runs):
        if not stored:
            (data_dir / "chroma" / FILE_NAME).unlink(missing_ok=True)
        wall, cpu = _cli(data_dir, "search", QUERY, "--json")
        walls.append(wall)
        cpus.append(cpu)
    return statistics.median(walls), statistics.median(cpus)


def _against(before: Path, data_dir: Path, runs: int) -> dict[str, float]:
    """Cold searches alternating between the checkout `before` and this one (medians of each)."""
    before_dir = data_dir / "before"
    _cli(before_dir, "index", repo=before)
    times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    for _ in range(runs):
        times["before"].append(_cli(before_dir, "search", QUERY, "--json", repo=before))
        times["after"].append(_cli(data_dir, "search", QUERY, "--json"))
    figures: dict[str, float] = {}
    for name, pairs in times.items():
        figures[f"{name}_cold_search_wall_s"] = round(statistics.median(w for w, _ in pairs), 2)
        figures[f"{name}_cold_search_cpu_s"] = round(statistics.median(c for _, c in pairs), 2)
    figures["cold_search_wall_over_before"] = round(
        figures["after_cold_search_wall_s"] / figures["before_cold_search_wall_s"], 2
    )
    figures["cold_search_cpu_over_before"] = round(
        figures["after_cold_search_cpu_s"] / figures["before_cold_search_cpu_s"], 2
    )
    return figures


def _first_question(data_dir: Path) -> dict[str, float]:
    """The policy index as `arca-bot run` prepares it at start-up, then one player question after
    another (each new to the query cache), timed one by one."""
    os.environ["ARCA_DATA_DIR"] = str(data_dir)
    from bot.app import make_policy_index
    from bot.config import load_settings

    start = time.perf_counter()
    index = make_policy_index(load_settings())
    startup = time.perf_counter() - start
    made_at_startup = len(index.fitted.made)

    async def ask() -> list[float]:
        times = []
        for query in [QUERY, *LATER]:
            began = time.perf_counter()
            await index.search(query)
            times.append(time.perf_counter() - began)
        return times

    times = asyncio.run(ask())
    made = len(index.fitted.made) - made_at_startup
    index.close()
    return {
        "startup_index_s": round(startup, 2),
        "first_question_ms": round(times[0] * 1000, 1),
        "later_question_ms": round(statistics.median(times[1:]) * 1000, 1),
        "first_over_later": round(times[0] / statistics.median(times[1:]), 2),
        "parts_made_at_startup": made_at_startup,
        "parts_made_by_the_questions": made,
    }


def _web_healthz(data_dir: Path) -> float:
    """Wall seconds from starting `arca-bot web` (no LLM, empty data directory) to its first `/healthz` 200."""
    import secrets
    import signal
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARCA_", "OPENAI_", "DISCORD_"))}
    env.update(
        ARCA_DATA_DIR=str(data_dir),
        ARCA_CONFIG="",
        ARCA_WEB_SECRET=secrets.token_hex(32),
        PYTHONPATH=str(REPO),
    )
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "web", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
                    if answer.status == 200:
                        return time.perf_counter() - start
            except OSError:
                time.sleep(0.05)
        raise SystemExit("`arca-bot web` ended before answering /healthz")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="cold searches with the stored model")
    parser.add_argument("--unstored-runs", type=int, default=1, help="cold searches without it")
    parser.add_argument("--skip-unstored", action="store_true")
    parser.add_argument(
        "--against", type=Path, help="another checkout: its cold searches alternate with this one's"
    )
    args = parser.parse_args(argv)

    figures: dict[str, float] = {"cores": os.cpu_count() or 0, "load_1min": round(os.getloadavg()[0], 1)}
    with tempfile.TemporaryDirectory(prefix="arca-cold-") as folder:
        data_dir = Path(folder)
        wall, cpu = _cli(data_dir, "index")
        figures.update(index_wall_s=round(wall, 2), index_cpu_s=round(cpu, 2))
        wall, cpu = _searches(data_dir, args.runs, stored=True)
        figures.update(cold_search_wall_s=round(wall, 2), cold_search_cpu_s=round(cpu, 2))
        figures["load_1min_after_searches"] = round(os.getloadavg()[0], 1)
        if args.against is not None:
            figures.update(_against(args.against.resolve(), data_dir, args.runs))
        figures.update(_first_question(data_dir))
        figures["web_healthz_wall_s"] = round(_web_healthz(data_dir / "web"), 2)
        if not args.skip_unstored:
            wall, cpu = _searches(data_dir, args.unstored_runs, stored=False)
            figures.update(unstored_search_wall_s=round(wall, 2), unstored_search_cpu_s=round(cpu, 2))
            figures["unstored_over_stored_cpu"] = round(cpu / figures["cold_search_cpu_s"], 2)
    for name, value in figures.items():
        print(f"{name}={value}")
    return figures


if __name__ == "__main__":
    main()
