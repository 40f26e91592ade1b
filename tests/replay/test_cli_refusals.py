"""`arca-bot replay` refuses what cannot be a run: exit 2 with one line, before any case runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import bot.app
from bot.cli import main
from tests.support.replay import minimal_case

WriteCase = Callable[[str, str], Path]


@pytest.fixture(autouse=True)
def _shared_index(monkeypatch: pytest.MonkeyPatch, policy_index: Any, tmp_path: Path) -> None:
    monkeypatch.setattr(bot.app, "make_policy_index", lambda settings, build=True: policy_index)
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ARCA_LOG_LEVEL", "WARNING")


def replay_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = main(["replay", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out.splitlines(), err.strip()


def _ran(lines: list[str]) -> list[str]:
    return [x for x in lines if x.startswith(("PASS", "FAIL"))]


@pytest.mark.parametrize("where", ["missing-dir/report.json", "a-folder"])
def test_a_report_path_that_cannot_be_written_is_refused_before_running(
    where: str, write_case: WriteCase, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_case("a.yaml", minimal_case("a case"))
    (tmp_path / "a-folder").mkdir()
    report = tmp_path / where
    code, lines, err = replay_cli(capsys, str(path), "--report", str(report))
    assert code == 2
    assert err.startswith(f"arca-bot: --report {report}:"), err
    assert not _ran(lines)


def test_k_matching_nothing_is_exit_2(write_case: WriteCase, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_case("a.yaml", minimal_case("order lookup"))
    code, lines, err = replay_cli(capsys, str(path.parent), "-k", "refund")
    assert code == 2
    assert err == "arca-bot: no case matches -k refund (1 case(s) found): nothing ran"
    assert not _ran(lines)


def test_an_empty_directory_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = replay_cli(capsys, str(empty))
    assert code == 2
    assert err == f"arca-bot: no transcripts (*.yaml) in {empty}: nothing ran"


@pytest.mark.parametrize("trials", ["0", "-3", "x"])
def test_trials_below_one_is_a_usage_error(
    trials: str, write_case: WriteCase, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_case("a.yaml", minimal_case("a case"))
    with pytest.raises(SystemExit) as info:
        main(["replay", str(path), "--trials", trials])
    assert info.value.code == 2
    assert "--trials" in capsys.readouterr().err


WRONG_STEPS = {
    "tool_number.yaml": ("  - user: hi\n    script:\n      - {tool: 123}\n", 6, "turns.0.script"),
    "answer_list.yaml": (
        "  - user: hi\n    script:\n      - {final: a}\n      - {answer: [1]}\n",
        6,
        "turns.0.script",
    ),
    "final_mapping.yaml": ("  - user: hi\n    script:\n      - {final: {x: 1}}\n", 6, "turns.0.script"),
    "raw_number.yaml": ("  - user: hi\n    script:\n      - {raw: 5}\n", 6, "turns.0.script"),
    "tools_entry_name.yaml": (
        "  - user: hi\n    script:\n      - {tools: [{tool: [x]}]}\n",
        6,
        "turns.0.script",
    ),
    "no_script.yaml": ("  - user: hi\n    expect: {codes: [OK]}\n", 5, "turns.0"),
}
HEAD = 'name: wrong steps\nfixtures:\n  players: [{id: P1, discord_id: "9001", name: a}]\nturns:\n'


@pytest.mark.parametrize("file", sorted(WRONG_STEPS), ids=lambda f: f.removesuffix(".yaml"))
def test_steps_of_the_wrong_type_are_an_invalid_transcript(
    file: str, write_case: WriteCase, capsys: pytest.CaptureFixture[str]
) -> None:
    body, line, key = WRONG_STEPS[file]
    path = write_case(file, HEAD + body)
    code, lines, err = replay_cli(capsys, str(path), "--mode", "native")
    assert code == 2
    assert err.startswith(f"invalid transcript: {path}:{line}: {key}"), err
    assert "ScriptExhausted" not in err
    assert not _ran(lines)


def test_an_amount_that_does_not_fit_in_a_fixture_is_an_invalid_transcript(
    write_case: WriteCase, capsys: pytest.CaptureFixture[str]
) -> None:
    text = minimal_case("huge").replace("amount: 39000", "amount: 99999999999999999999999")
    path = write_case("huge.yaml", text)
    code, lines, err = replay_cli(capsys, str(path))
    assert code == 2
    assert err.startswith(f"invalid transcript: {path}:5: orders.0.amount"), err
    assert not _ran(lines)
