"""`replay --live` grades facts: per case and in the summary before the closing line, how many delivered
sentences carried an unbacked fact and how many the fact check withheld; `ARCA_FACT_CHECK=observe` gives
the figure without the check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.llm import ScriptedLLM
from bot.replay.command import replay

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
    assert f"facts: {unbacked} unbacked delivered, {withheld} withheld" in lines[0]
    summary = f"facts: {unbacked} delivered sentences carried an unbacked fact, {withheld} withheld (1 runs)"
    assert summary in lines and lines.index(summary) < len(lines) - 1
    assert lines[-1] == f"{1 - status} passed, {status} failed"
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["facts"] == {"unbacked_delivered": unbacked, "withheld": withheld, "runs": 1}
    assert data["cases"][0]["facts_withheld"] == withheld


async def test_observing_grades_the_same_run_as_the_fact_check_would_have_delivered_it(
    tmp_path: Path, policy_index
) -> None:
    """One sitting gives both figures: the check reads the finished answer and never talks back to the
    model, so each observed run is graded as delivered and with its unbacked sentences replaced."""
    case = tmp_path / "case.yaml"
    case.write_text(CASE, encoding="utf-8")
    report = tmp_path / "report.json"
    lines: list[str] = []
    settings = load_settings(data_dir=tmp_path / "data").model_copy(update={"fact_check": "observe"})
    code = await replay(
        settings,
        [case],
        live=True,
        trials=2,
        report=report,
        out=lines.append,
        policy_index=policy_index,
        live_llm_factory=lambda: ScriptedLLM(
            [
                {"tool": "search_policy", "args": {"query": "환불 신청 기간"}},
                {
                    "final": "환불은 구매 후 45일 이내에 신청하시면 됩니다. 더 궁금한 점이 있으면 말씀해 주세요."
                },
            ],
            mode="json",
        ),
    )
    assert code == 1, lines
    assert lines[0].startswith("FAIL") and lines[0].endswith("(fact check enforcing: PASS)")
    assert "with the fact check enforcing on the same runs: 2/2 runs passed, pass^2 1/1" in lines
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["pass_k"]["passed_all_trials"] == 0
    assert data["with_fact_check"] == {
        "runs_passed": 2,
        "runs": 2,
        "k": 2,
        "cases": 1,
        "passed_all_trials": 1,
    }
    assert [c["checked_passed"] for c in data["cases"]] == [True, True]
    turn = data["cases"][0]["turns"][0]
    assert "45일" in turn["answer"] and turn["tools"] == [["search_policy", "OK"]]
    # The loop's two replies, then the answer the player was streamed (marked: synthesis, not a step).
    assert len(turn["model_replies"]) == 3 and "45일" in turn["model_replies"][1]
    assert turn["model_replies"][2] == (
        "[synthesis stream] 환불은 구매 후 45일 이내에 신청하시면 됩니다. 더 궁금한 점이 있으면 말씀해 주세요."
    )
    assert turn["unbacked"][0]["removed"] == "환불은 구매 후 45일 이내에 신청하시면 됩니다."
    assert "45일" not in (turn["unbacked"][0]["replacement"] or "")


def test_would_deliver_replaces_each_unbacked_sentence_once_and_drops_model_notes() -> None:
    from bot.replay.fact_records import would_deliver

    answer = "환불은 45일 이내입니다. 플레이어에게 안내하세요. 감사합니다."
    details = [
        {
            "removed": "환불은 45일 이내입니다.",
            "replacement": "환불은 7일 이내에 신청할 수 있습니다. [환불 정책]",
        },
        {"removed": "플레이어에게 안내하세요.", "replacement": None},
        {"removed": "없는 문장.", "replacement": "x"},
    ]
    assert would_deliver(answer, details) == "환불은 7일 이내에 신청할 수 있습니다. [환불 정책]  감사합니다."
    assert would_deliver(None, details) is None
