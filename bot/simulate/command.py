"""`arca-bot simulate`: load every scenario (validated up front), run each `trials` times, up to
`parallel` runs at once, print a line per run and the pass^k table, write the report and transcripts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.config import Settings
from bot.simulate.report import run_line, summarise, table
from bot.simulate.runner import RunResult, Simulator
from bot.simulate.scenario import Scenario
from bot.simulate.transcripts import save_transcript


async def simulate(
    settings: Settings,
    scenarios: list[Scenario],
    *,
    bot_model_factory: Callable[[], Any],
    player_model: Any = None,
    trials: int = 1,
    parallel: int = 1,
    report: Path | None = None,
    save_transcripts: Path | None = None,
    policy_index: Any = None,
    out: Callable[[str], None] = print,
) -> int:
    """Run and print; 0 when every run passed, 1 otherwise."""
    simulator = Simulator(
        settings, bot_model_factory=bot_model_factory, player_model=player_model, policy_index=policy_index
    )
    _ = simulator.policy_index  # built once, before the runs share it
    gate = asyncio.Semaphore(max(1, parallel))
    results: list[RunResult] = []

    async def one(scenario: Scenario, trial: int) -> RunResult:
        async with gate:
            result = await simulator.run(scenario, trial)
        for line in run_line(result, trials):
            out(line)
        if save_transcripts is not None:
            saved = save_transcript(scenario, result, save_transcripts)
            if saved is not None:
                out(f"      saved as {saved}")
        return result

    jobs = [one(s, t) for s in scenarios for t in range(1, trials + 1)]
    results = list(await asyncio.gather(*jobs))
    order = {
        (s.path, t): i for i, (s, t) in enumerate((s, t) for s in scenarios for t in range(1, trials + 1))
    }
    results.sort(key=lambda r: order.get((r.path, r.trial), 0))
    summary = summarise(results, trials)
    for line in table(summary, trials):
        out(line)
    if report is not None:
        tmp = report.with_name(report.name + ".tmp")
        tmp.write_text(json.dumps(summary, ensure_ascii=False, indent=2, default=list), encoding="utf-8")
        tmp.replace(report)
    passed = sum(r.passed for r in results)
    out(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1
