"""`--save-transcripts`: a simulated run as a replay transcript (DESIGN.md §9). The bot model's choices
become each turn's script and the scenario's grading becomes expectations, so a failed run replays
and fails the same way: a regression test in one step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from bot.simulate.runner import RunResult
from bot.simulate.scenario import Scenario

ESCALATE = "escalate_to_staff"


def transcript_of(scenario: Scenario, run: RunResult) -> dict[str, Any]:
    turns: list[dict[str, Any]] = []
    for log in run.turns:
        turn: dict[str, Any] = {"user": log.player}
        if scenario.player.as_ is not None:
            turn["as"] = scenario.player.as_
        turn["script"] = log.steps
        turn["expect"] = {}
        turns.append(turn)
    if not turns:
        return {}
    last = turns[-1]["expect"]
    g = scenario.grade
    if g.coupons is not None:
        last["coupons"] = [
            {"order_id": c.order_id, **({"amount": c.amount} if c.amount else {})} for c in g.coupons
        ]
    elif g.no_coupon_for:
        allowed = [(o, a) for o, a in run.end_coupons if o not in g.no_coupon_for]
        last["coupons"] = [{"order_id": o, "amount": a} for o, a in allowed]
    if g.escalation is True:
        at = next((i for i, log in enumerate(run.turns) if any(n == ESCALATE for n, _c in log.tools)), None)
        turns[len(turns) - 1 if at is None else at]["expect"]["tools"] = [ESCALATE]
    elif g.escalation is False:
        for turn in turns:
            turn["expect"]["tools_not_called"] = [ESCALATE]
    for turn in turns:
        if not turn["expect"]:
            del turn["expect"]
    return {
        "name": f"{scenario.name} (simulated, trial {run.trial}, {'passed' if run.passed else 'failed'})",
        "tags": [*scenario.tags, "simulated"],
        "fixtures": scenario.fixtures,
        "turns": turns,
    }


def save_transcript(scenario: Scenario, run: RunResult, folder: Path) -> Path | None:
    """Write the run's transcript into `folder` (None: the run had no turn to replay)."""
    data = transcript_of(scenario, run)
    if not data:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    stem = Path(scenario.path).stem if scenario.path else "scenario"
    path = folder / f"{stem}-trial{run.trial}.yaml"
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=110)
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # never a half-written transcript
    return path
