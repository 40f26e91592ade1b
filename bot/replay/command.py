"""`arca-bot replay`: load every case (validated up front), run each in every mode (and, live, every
trial), print a line per run and the closing summary (pass^k, seconds per run, the fact figures), and
write the JSON report."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bot.config import Settings
from bot.guards.fact_check import OBSERVE
from bot.replay.format import Transcript, TranscriptError, collect_transcripts, load_transcript
from bot.replay.runner import MODES, CaseResult, Replayer


def load_cases(paths: list[Path], name_filter: str | None = None) -> list[Transcript]:
    """Every case, validated up front: an invalid one raises `TranscriptError` (file and line)."""
    cases = [load_transcript(p) for p in collect_transcripts(paths)]
    if name_filter:
        needle = name_filter.lower()
        cases = [c for c in cases if needle in c.name.lower() or needle in Path(c.path).stem.lower()]
    return cases


async def replay(
    settings: Settings,
    paths: list[Path],
    *,
    modes: tuple[str, ...] = MODES,
    live: bool = False,
    trials: int = 1,
    report: Path | None = None,
    name_filter: str | None = None,
    out: Callable[[str], None] = print,
    policy_index: Any = None,
    live_llm_factory: Callable[[], Any] | None = None,
) -> int:
    """Run and print; 0 all passed, 1 a case failed, 2 an invalid transcript."""
    try:
        cases = load_cases(paths, name_filter)
    except TranscriptError as exc:
        print(f"invalid transcript: {exc}", file=sys.stderr)
        return 2
    if live and live_llm_factory is None:
        from bot.app import make_llm_factory

        live_llm_factory = make_llm_factory(settings)
    replayer = Replayer(
        settings, policy_index=policy_index, live_llm_factory=live_llm_factory if live else None
    )
    results: list[CaseResult] = []
    run_modes = ("live",) if live else modes
    for case in cases:
        for mode in run_modes:
            for trial in range(1, max(1, trials) + 1):
                res = await replayer.run_case(case, "native" if mode == "live" else mode, trial)
                res.mode = mode
                results.append(res)
                label = f"[{mode}]" + (f" trial {trial}/{trials}" if trials > 1 else "")
                facts = (
                    f"  facts: {res.facts_unbacked} unbacked delivered, {res.facts_withheld} withheld"
                    if live
                    else ""
                )
                if res.checked_passed is not None:
                    facts += f"  (fact check enforcing: {'PASS' if res.checked_passed else 'FAIL'})"
                out(f"{'PASS' if res.passed else 'FAIL'}  {case.name} {label}  ({res.elapsed:.2f}s){facts}")
                for f in res.failures:
                    out(f"      {f}")
                for f in res.checked_failures:
                    if f not in res.failures:
                        out(f"      enforcing: {f}")
    passed = sum(r.passed for r in results)
    failed = len(results) - passed
    observing = settings.fact_check == OBSERVE
    summary: dict[str, Any] = {"passed": passed, "failed": failed, "cases": [asdict(r) for r in results]}
    if trials > 1:
        by_case: dict[tuple[str, str], list[bool]] = {}
        for r in results:
            by_case.setdefault((r.path, r.mode), []).append(r.passed)
        all_ok = sum(all(v) for v in by_case.values())
        summary["pass_k"] = {"k": trials, "cases": len(by_case), "passed_all_trials": all_ok}
        out(
            f"pass^{trials}: {all_ok}/{len(by_case)} cases passed every trial ({all_ok / max(len(by_case), 1):.2f})"
            + (" — as delivered, the fact check observing" if observing else "")
        )
    if observing and results:
        checked_by_case: dict[tuple[str, str], list[bool]] = {}
        for r in results:
            checked_by_case.setdefault((r.path, r.mode), []).append(bool(r.checked_passed))
        checked_runs = sum(bool(r.checked_passed) for r in results)
        checked_all = sum(all(v) for v in checked_by_case.values())
        summary["with_fact_check"] = {
            "runs_passed": checked_runs,
            "runs": len(results),
            "k": trials,
            "cases": len(checked_by_case),
            "passed_all_trials": checked_all,
        }
        out(
            f"with the fact check enforcing on the same runs: {checked_runs}/{len(results)} runs passed, "
            f"pass^{trials} {checked_all}/{len(checked_by_case)}"
        )
    if live and results:
        times = sorted(r.elapsed for r in results)
        p50, p90 = (times[max(0, math.ceil(q * len(times)) - 1)] for q in (0.5, 0.9))
        summary["seconds_per_run"] = {"p50": p50, "p90": p90}
        out(f"seconds per run: p50 {p50:.1f}, p90 {p90:.1f} ({len(times)} runs)")
    if live and results:
        unbacked = sum(r.facts_unbacked for r in results)
        withheld = sum(r.facts_withheld for r in results)
        summary["facts"] = {"unbacked_delivered": unbacked, "withheld": withheld, "runs": len(results)}
        out(
            f"facts: {unbacked} delivered sentences carried an unbacked fact, {withheld} withheld "
            f"({len(results)} runs)"
        )
    if report is not None:
        report.write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
    out(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
