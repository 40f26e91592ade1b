"""`replay --live` grades facts: per case and in the summary before the closing line, how many delivered
sentences carried an unbacked fact and how many the fact check withheld; `ARCA_FACT_CHECK=observe` gives
the figure without the check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.llm import ScriptedLLM
from bot.replay.runner import replay

CASE = """\
name: refund window invented after a search
tags: [policy, korean]
fixtures:
  players: [{id: P100, discord_id: "9001", name: 루나}]
turns:
  - user: "환불은 며칠 안에 신청해야 하나요?"
    expect:
      answer_not_contains: ["45일"]
"""


@pytest.mark.parametrize(
    ("mode", "unbacked", "withheld", "status"), [("enforce", 0, 1, 0), ("observe", 1, 0, 1)]
)
async def test_live_replay_reports_unbacked_and_withheld_facts(
    tmp_path: Path, policy_index, mode: str, unbacked: int, withheld: int, status: int
) -> None:
    case = tmp_path / "case.yaml"
    case.write_text(CASE, encoding="utf-8")
    report = tmp_path / "report.json"
    lines: list[str] = []
    settings = load_settings(data_dir=tmp_path / "data").model_copy(update={"fact_check": mode})
    code = await replay(
        settings,
        [case],
        live=True,
        trials=1,
        report=report,
        out=lines.append,
        policy_index=policy_index,
        live_llm_factory=lambda: ScriptedLLM(
            [
                {"tool": "search_policy", "args": {"query": "환불 신청 기간"}},
                {"final": "환불은 구매 후 45일 이내에 신청하시면 됩니다."},
            ],
            mode="json",
        ),
    )
    assert code == status, lines
    assert lines[0].endswith(f"facts: {unbacked} unbacked delivered, {withheld} withheld")
    summary = f"facts: {unbacked} delivered sentences carried an unbacked fact, {withheld} withheld (1 runs)"
    assert summary in lines and lines.index(summary) < len(lines) - 1
    assert lines[-1] == f"{1 - status} passed, {status} failed"
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["facts"] == {"unbacked_delivered": unbacked, "withheld": withheld, "runs": 1}
    assert data["cases"][0]["facts_withheld"] == withheld
