"""Configuration errors come before any side effect: an invalid `ARCA_SUPPORT_HOURS` stops a command before
the database file exists, and `arca-bot doctor` in a fresh data dir leaves it untouched (it says the
database is missing instead of creating an empty one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from bot.doctor import doctor_command


@pytest.mark.parametrize("command", [["stats"], ["incident", "list"], ["seed"]])
def test_invalid_support_hours_stop_a_command_before_the_database_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command
) -> None:
    data = tmp_path / "var"
    monkeypatch.setenv("ARCA_DATA_DIR", str(data))
    monkeypatch.setenv("ARCA_SUPPORT_HOURS", "weekdays 10-19")
    assert main(command) == 2
    assert "ARCA_SUPPORT_HOURS" in capsys.readouterr().err
    assert not (data / "arca.db").exists()


def test_doctor_in_a_fresh_data_dir_creates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "var"
    monkeypatch.setenv("ARCA_DATA_DIR", str(data))
    lines: list[str] = []
    assert doctor_command(lines.append) == 1
    assert not data.exists(), sorted(p.name for p in data.rglob("*"))
    said = "\n".join(lines)
    assert f"✘ database: no database at {data / 'arca.db'}" in said and "arca-bot seed" in said
