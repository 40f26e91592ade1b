"""The `arca-bot replay` contract of DESIGN.md §9, in-process through `bot.cli.main`: a line per case
and mode, failures with expected and actual, `N passed, M failed`, exit 0/1/2, `--report`, `-k`,
`--mode`, directories, and the scripted model's own failures (too few, unused steps, bad history).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import bot.app
from bot.cli import main
from bot.memory import ThreadMemory
from bot.replay.format import load_transcript
from bot.replay.runner import Replayer
from tests.support.replay import minimal_case

WriteCase = Callable[[str, str], Path]


@pytest.fixture(autouse=True)
def _shared_index(monkeypatch: pytest.MonkeyPatch, policy_index: Any, tmp_path: Path) -> None:
    """The CLI builds its index from the settings; here it gets the session's (building takes ~12 s)."""
    monkeypatch.setattr(bot.app, "make_policy_index", lambda settings, build=True: policy_index)
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ARCA_LOG_LEVEL", "WARNING")


def replay_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = main(["replay", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_a_line_per_case_and_mode_then_the_closing_line(
    write_case: WriteCase, capsys: pytest.CaptureFixture[str]
) -> None:
    write_case("a.yaml", minimal_case("first case"))
    path = write_case("b.yaml", minimal_case("second case"))
    code, lines, _ = replay_cli(capsys, str(path.parent))
    assert code == 0
    case_lines = [line for line in lines if line.startswith(("PASS", "FAIL"))]
    assert len(case_lines) == 4
    for name in ("first case", "second case"):
        for mode in ("native", "json"):
            assert any(
                line.startswith("PASS") and name in line and f"[{mode}]" in line for line in case_lines
            )
    assert lines[-1] == "4 passed, 0 failed"


def test_a_failing_case_shows_expected_and_actual_and_exits_1(
    write_case: WriteCase, capsys: pytest.CaptureFixture[str]
) -> None:
    write_case("ok.yaml", minimal_case("good case"))
    path = write_case("bad.yaml", minimal_case("bad case", expected="환불 완료"))
    code, lines, _ = replay_cli(capsys, str(path.parent))
    text = "\n".join(lines)
    assert code == 1
    assert "FAIL  bad case [native]" in text and "FAIL  bad case [json]" in text
    assert "expect.answer_contains: '환불 완료' not in answer 'ORD001은 배송 지연 상태입니다.'" in text
    assert lines[-1] == "2 passed, 2 failed"


def test_a_failed_code_expectation_names_expected_and_actual_codes(
    write_case: WriteCase, capsys: pytest.CaptureFixture[str]
) -> None:
    case = minimal_case("wrong code").replace("codes: [OK]", "codes: [ISSUED]")
    path = write_case("c.yaml", case)
    code, lines, _ = replay_cli(capsys, str(path), "--mode", "native")
    assert code == 1
    assert any("expected subsequence ['ISSUED'], got ['OK']" in line for line in lines)


INVALID = {
    "bad_yaml.yaml": ('name: broken\nturns:\n  - user: "unclosed\n    expect: {}\n', 3),
    "unknown_key.yaml": ("name: x\nturns:\n  - user: hi\n    expect:\n      answer_has: [x]\n", 5),
    "no_user_or_staff.yaml": (
        "name: x\nfixtures:\n  players: [{id: P100, discord_id: '9001', name: a}]\nturns:\n"
        "  - expect: {codes: [OK]}\n",
        5,
    ),
    "two_kinds.yaml": (
        "name: x\nfixtures:\n  players: [{id: P100, discord_id: '9001', name: a}]\nturns:\n"
        "  - user: hi\n    script:\n      - {final: a}\n      - {tool: lookup_order, final: b}\n",
        6,
    ),
    "missing_player.yaml": (
        "name: x\nfixtures:\n  players: [{id: P100, discord_id: '9001', name: a}]\n  orders:\n"
        "    - {id: ORD1, player_id: P999, status: delayed}\nturns:\n  - user: hi\n",
        5,
    ),
    "bad_rules.yaml": (
        "name: x\nfixtures:\n  coupon_rules:\n    approval_treshold: 10000\n"
        "  players: [{id: P100, discord_id: '9001', name: a}]\nturns:\n  - user: hi\n",
        4,
    ),
    "interrupt_past_script.yaml": (
        "name: x\nfixtures:\n  players: [{id: P100, discord_id: '9001', name: a}]\nturns:\n"
        "  - user: hi\n    script: [{final: a}]\n    interrupts:\n      - {after_step: 3, text: more}\n",
        8,
    ),
}


@pytest.mark.parametrize("file", sorted(INVALID), ids=lambda f: f.removesuffix(".yaml"))
def test_an_invalid_transcript_exits_2_naming_file_and_line(
    file: str, write_case: WriteCase, capsys: pytest.CaptureFixture[str]
) -> None:
    text, line = INVALID[file]
    write_case("valid.yaml", minimal_case("valid"))
    path = write_case(file, text)
    code, lines, err = replay_cli(capsys, str(path.parent))
    assert code == 2
    assert f"{path}:{line}:" in err
    assert not [x for x in lines if x.startswith(("PASS", "FAIL"))], "nothing runs when a case is invalid"


def test_report_file_holds_every_result_as_json(
    write_case: WriteCase, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_case("ok.yaml", minimal_case("good case"))
    path = write_case("bad.yaml", minimal_case("bad case", expected="환불 완료"))
    report = tmp_path / "report.json"
    code, _, _ = replay_cli(capsys, str(path.parent), "--report", str(report))
    data = json.loads(report.read_text(encoding="utf-8"))
    assert code == 1
    assert (data["passed"], data["failed"]) == (2, 2)
    by_key = {(c["name"], c["mode"]): c for c in data["cases"]}
    assert set(by_key) == {(n, m) for n in ("good case", "bad case") for m in ("native", "json")}
    assert by_key[("bad case", "json")]["passed"] is False
    assert any("환불 완료" in f for f in by_key[("bad case", "json")]["failures"])
    assert by_key[("good case", "native")]["failures"] == []


def test_k_selects_cases_by_name(write_case: WriteCase, capsys: pytest.CaptureFixture[str]) -> None:
    write_case("a.yaml", minimal_case("order lookup"))
    path = write_case("b.yaml", minimal_case("coupon request", expected="없는 문장"))
    code, lines, _ = replay_cli(capsys, str(path.parent), "-k", "lookup")
    assert code == 0
    assert all("order lookup" in x for x in lines if x.startswith(("PASS", "FAIL")))
    assert lines[-1] == "2 passed, 0 failed"


@pytest.mark.parametrize("mode", ["native", "json"])
def test_mode_runs_only_that_mode(
    mode: str, write_case: WriteCase, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_case("a.yaml", minimal_case("one case"))
    code, lines, _ = replay_cli(capsys, str(path), "--mode", mode)
    case_lines = [x for x in lines if x.startswith(("PASS", "FAIL"))]
    assert code == 0
    assert len(case_lines) == 1 and f"[{mode}]" in case_lines[0]
    assert lines[-1] == "1 passed, 0 failed"


def test_a_directory_means_every_yaml_below_it(
    write_case: WriteCase, capsys: pytest.CaptureFixture[str]
) -> None:
    write_case("top.yaml", minimal_case("top level"))
    write_case("nested/deeper/inner.yaml", minimal_case("nested case"))
    path = write_case("notes.txt", "not a transcript")
    code, lines, _ = replay_cli(capsys, str(path.parent), "--mode", "native")
    text = "\n".join(lines)
    assert code == 0
    assert "top level" in text and "nested case" in text
    assert lines[-1] == "2 passed, 0 failed"


def test_a_missing_path_is_an_invalid_transcript(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = replay_cli(capsys, str(tmp_path / "nope.yaml"))
    assert code == 2 and "nope.yaml:1:" in err


SHORT_SCRIPT = """\
name: the run needs more steps than scripted
fixtures:
  players: [{id: P100, discord_id: "9001", name: 루나}]
  orders: [{id: ORD001, player_id: P100, status: delayed}]
turns:
  - user: "ORD001?"
    script:
      - {tool: lookup_order, args: {order_id: ORD001}}
"""

UNUSED_STEPS = """\
name: steps left unused
fixtures:
  players: [{id: P100, discord_id: "9001", name: 루나}]
turns:
  - user: "안녕하세요"
    script:
      - {final: "안녕하세요!"}
      - {tool: lookup_order, args: {order_id: ORD001}}
"""

IDLE_BUT_CALLED = """\
name: script [] but the model runs
fixtures:
  players: [{id: P100, discord_id: "9001", name: 루나}]
turns:
  - user: "안녕하세요"
    script: []
"""


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (SHORT_SCRIPT, "asked for loop step 2, but the script has only 1 loop step(s)"),
        (UNUSED_STEPS, "steps [1] were never used"),
        (IDLE_BUT_CALLED, "asked for loop step 1, but the script has only 0 loop step(s)"),
    ],
    ids=["too-few-steps", "unused-steps", "script-empty-but-model-called"],
)
@pytest.mark.parametrize("mode", ["native", "json"])
async def test_a_script_that_does_not_fit_the_run_fails_the_case(
    text: str, reason: str, mode: str, write_case: WriteCase, replayer: Replayer
) -> None:
    result = await replayer.run_case(load_transcript(write_case("case.yaml", text)), mode)
    assert not result.passed
    assert any(reason in f for f in result.failures), result.failures


async def test_a_history_the_api_would_reject_fails_the_case(
    write_case: WriteCase, replayer: Replayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An engine or memory bug that leaves a tool call without its result must fail the case."""
    real_load = ThreadMemory.load_with  # the engine's load (with each message's request share)

    async def dangling(self: ThreadMemory, thread_id: str, derive: Any) -> tuple[list[dict[str, Any]], Any]:
        history, shares = await real_load(self, thread_id, derive)
        call = {
            "id": "call_lost",
            "type": "function",
            "function": {"name": "lookup_order", "arguments": "{}"},
        }
        return [*history, {"role": "assistant", "content": None, "tool_calls": [call]}], shares

    monkeypatch.setattr(ThreadMemory, "load_with", dangling)
    case = load_transcript(write_case("case.yaml", minimal_case("bad history")))
    result = await replayer.run_case(case, "native")
    assert not result.passed
    assert any("invalid history" in f and "between an assistant's tool_calls" in f for f in result.failures)


async def test_expectations_fail_when_the_outcome_differs(write_case: WriteCase, replayer: Replayer) -> None:
    """Each expectation kind can fail: the runner is not a rubber stamp."""
    case = """\
name: every expectation wrong
fixtures:
  clock: "2026-03-02T10:00:00+09:00"
  players: [{id: P100, discord_id: "9001", name: 루나}]
  orders: [{id: ORD001, player_id: P100, status: delayed, item: 굿즈, amount: 39000}]
turns:
  - user: "ORD001?"
    script:
      - {tool: lookup_order, args: {order_id: ORD001}}
      - {final: "배송 지연입니다."}
    expect:
      tools: [issue_coupon]
      tools_not_called: [lookup_order]
      codes: [ISSUED]
      answer_contains: ["발급"]
      answer_not_contains: ["배송 지연"]
      coupons: [{order_id: ORD001}]
      events: [inject]
      observations_contain: ["배송 완료"]
      observations_not_contain: ["ORD001"]
      model_saw: ["환불", {step: 1, text: "없는 말"}]
      model_not_saw: ["ORD001?"]
  - staff: "/coupon list"
    as: "9001"
    expect: {denied: false, reply_contains: ["ARCA-"], reply_not_contains: ["운영진"]}
"""
    result = await replayer.run_case(load_transcript(write_case("wrong.yaml", case)), "native")
    kinds = {f.split(": ", 2)[1].split(":")[0] for f in result.failures}
    assert kinds == {
        "expect.tools",
        "expect.tools_not_called",
        "expect.codes",
        "expect.answer_contains",
        "expect.answer_not_contains",
        "expect.coupons",
        "expect.events",
        "expect.observations_contain",
        "expect.observations_not_contain",
        "expect.model_saw",
        "expect.model_not_saw",
        "expect.denied",
        "expect.reply_contains",
        "expect.reply_not_contains",
    }
