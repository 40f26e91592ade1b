"""Broken policies and rules stop chat, demo, replay and run with one line and exit 2; doctor names them too.

Each of these used to be a traceback (exit 1) that `doctor` did not report.
"""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

from bot.app import PROJECT_ROOT
from bot.cli import main


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data dir, an LLM that is configured (never reached) and a Discord token: only the policies are wrong."""
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("ARCA_MODEL", "some-model")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv(
        "DISCORD_TOKEN", "MTAzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789"
    )
    policies = tmp_path / "policies"
    policies.mkdir()
    for name in ("coupon_rules.yaml", "delivery.md"):
        shutil.copy(PROJECT_ROOT / "policies" / name, policies / name)
    monkeypatch.setenv("ARCA_POLICIES_DIR", str(policies))
    return policies


COMMANDS = [
    ["chat"],
    ["demo"],
    ["replay", str(PROJECT_ROOT / "data" / "demo" / "1_order_lookup.yaml")],
    ["run"],
    ["start"],
]

RULE_BREAKS = [
    ("max_amount: 20000\n", "max_amount: 500\n", "max_amount: must be ≥ min_amount"),
    ("min_amount: 1000\n", "min_amount: -5\n", "min_amount:"),
    ("valid_days: 30\n", "valid_days: 30\nmax_amont: 3\n", "max_amont: unknown key"),
    ("valid_days: 30\n", "valid_days: [30\n", "not valid YAML"),
]


def _break_rules(policies: Path, old: str, new: str) -> Path:
    rules = policies / "coupon_rules.yaml"
    text = rules.read_text(encoding="utf-8")
    assert old in text
    rules.write_text(text.replace(old, new), encoding="utf-8")
    return rules


def _one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str], *expected: str) -> None:
    assert main(argv) == 2, argv
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err + captured.out
    for text in expected:
        assert text in err, (argv, err)


@pytest.mark.parametrize(("old", "new", "expected"), RULE_BREAKS)
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_bad_coupon_rules_are_one_line_and_exit_2(
    env: Path, argv: list[str], old: str, new: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _break_rules(env, old, new)
    _one_line_exit_2(argv, capsys, "coupon_rules.yaml", expected)


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_a_missing_or_empty_policies_dir_is_one_line_and_exit_2(
    env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ARCA_POLICIES_DIR", str(tmp_path / "nowhere"))
    _one_line_exit_2(argv, capsys, "ARCA_POLICIES_DIR", "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("ARCA_POLICIES_DIR", str(empty))
    _one_line_exit_2(argv, capsys, "ARCA_POLICIES_DIR", "no policy documents")


@pytest.mark.parametrize(("old", "new", "expected"), RULE_BREAKS[:1])
def test_doctor_reports_bad_coupon_rules(
    env: Path, old: str, new: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = _break_rules(env, old, new)
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert f"✘ policies: {rules}: {expected}" in out


def test_doctor_reports_a_missing_policies_dir(
    env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ARCA_POLICIES_DIR", str(tmp_path / "nowhere"))
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "✘ policies: ARCA_POLICIES_DIR: policy directory not found" in out


def test_doctor_says_the_policies_are_fine(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["doctor"])
    assert (
        f"✔ policies: 1 policy document(s) (questions for 0 of 6 sections) and the coupon rules in {env}"
        in (capsys.readouterr().out)
    )
