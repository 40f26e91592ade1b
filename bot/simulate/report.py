"""The simulation report: pass^k per scenario and overall (τ-bench's unbiased estimate from n trials
with c passes: C(c, k) / C(n, k)), which criterion failed, seconds and tokens per run, and the
conversation of every failed run."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from bot.simulate.runner import RunResult


def pass_hat_k(trials: int, passes: int, k: int) -> float:
    """The chance that k trials drawn from these all pass."""
    if k > trials:
        raise ValueError("k is larger than the number of trials")
    return math.comb(passes, k) / math.comb(trials, k)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else 0.0


def end_state_passed(run: RunResult) -> bool:
    """Whether the run passed on the database alone (its rubric lines set aside): a small judge model's
    verdicts are read beside this, not instead of it."""
    return all(f.startswith("rubric: ") for f in run.failures)


def summarise(results: list[RunResult], trials: int) -> dict[str, Any]:
    """The JSON report."""
    by_scenario: dict[str, list[RunResult]] = {}
    for r in results:
        by_scenario.setdefault(r.path or r.scenario, []).append(r)
    scenarios = []
    for runs in by_scenario.values():
        passes = sum(r.passed for r in runs)
        by_state = sum(end_state_passed(r) for r in runs)
        scenarios.append(
            {
                "name": runs[0].scenario,
                "path": runs[0].path,
                "trials": len(runs),
                "passed": passes,
                "pass_k": {str(k): pass_hat_k(len(runs), passes, k) for k in range(1, len(runs) + 1)},
                "pass_k_end_state": {
                    str(k): pass_hat_k(len(runs), by_state, k) for k in range(1, len(runs) + 1)
                },
                "runs": [asdict(r) for r in runs],
            }
        )
    overall = {
        str(k): sum(s["pass_k"][str(k)] for s in scenarios) / len(scenarios)
        for k in range(1, trials + 1)
        if scenarios and all(str(k) in s["pass_k"] for s in scenarios)
    }
    overall_state = {
        str(k): sum(s["pass_k_end_state"][str(k)] for s in scenarios) / len(scenarios)
        for k in range(1, trials + 1)
        if scenarios and all(str(k) in s["pass_k_end_state"] for s in scenarios)
    }
    seconds = [r.seconds for r in results]
    return {
        "scenarios": scenarios,
        "overall": {
            "pass_k": overall,
            "pass_k_end_state": overall_state,
            "runs": len(results),
            "passed": sum(r.passed for r in results),
        },
        "seconds_per_run": {"p50": _percentile(seconds, 0.5), "p90": _percentile(seconds, 0.9)},
        "tokens_per_run": {
            "bot": sum(r.tokens["bot"] for r in results) / max(len(results), 1),
            "player": sum(r.tokens["player"] for r in results) / max(len(results), 1),
        },
    }


def run_line(r: RunResult, trials: int) -> list[str]:
    """What is printed for one run: a line, then (failed) each criterion and the conversation."""
    label = f" trial {r.trial}/{trials}" if trials > 1 else ""
    lines = [
        f"{'PASS' if r.passed else 'FAIL'}  {r.scenario}{label}  ({r.seconds:.1f}s, {len(r.turns)} turns, "
        f"ended: {r.stopped})"
    ]
    if not r.passed:
        lines += [f"      {f}" for f in r.failures]
        for t in r.turns:
            lines.append(f"        player: {t.player}")
            calls = ", ".join(f"{name} {code}" for name, code in t.tools)
            lines.append(f"        bot:    {t.bot[:300]}" + (f"   [{calls}]" if calls else ""))
    for item in r.rubric:
        if item["verdict"] is None:
            lines.append(f"      rubric not judged (no simulation model): {item['line']}")
    return lines


def table(summary: dict[str, Any], trials: int) -> list[str]:
    """pass^1 … pass^k per scenario and overall."""
    head = "scenario".ljust(48) + "".join(f"pass^{k}".rjust(9) for k in range(1, trials + 1))
    lines = [head]
    for s in summary["scenarios"]:
        lines.append(
            s["name"][:47].ljust(48)
            + "".join(f"{s['pass_k'].get(str(k), 0):9.2f}" for k in range(1, trials + 1))
        )
    overall = summary["overall"]["pass_k"]
    lines.append(
        "overall".ljust(48) + "".join(f"{overall.get(str(k), 0):9.2f}" for k in range(1, trials + 1))
    )
    sec, tok = summary["seconds_per_run"], summary["tokens_per_run"]
    lines.append(
        f"seconds per run: p50 {sec['p50']:.1f}, p90 {sec['p90']:.1f}; tokens per run: bot {tok['bot']:.0f}, "
        f"player {tok['player']:.0f}"
    )
    return lines
