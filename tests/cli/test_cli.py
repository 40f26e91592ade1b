from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import main


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "var"
    monkeypatch.setenv("ARCA_DATA_DIR", str(d))
    return d


def test_seed_command_is_idempotent(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["seed"]) == 0
    assert "+9 players" in capsys.readouterr().out
    assert main(["seed"]) == 0
    assert "already up to date" in capsys.readouterr().out
    assert (data_dir / "arca.db").exists()


def test_seed_command_reports_a_bad_file_with_its_line(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("players:\n  - {id: P1}\n", encoding="utf-8")
    assert main(["seed", "--file", str(bad)]) == 2
    assert f"{bad}:2:" in capsys.readouterr().err


def test_bad_configuration_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ARCA_TIMEZONE", "Nowhere/City")
    assert main(["seed"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("arca-bot: configuration error: ARCA_TIMEZONE")
    assert len(err.splitlines()) == 1


def test_doctor_says_what_to_fix_and_exits_1_when_not_ready(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["seed"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("ARCA_MODEL", "some-model")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_free_port()}/v1")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "✔ database: sqlite" in out and "9 players" in out
    assert "✔ embedding model: multilingual-e5-small" in out
    assert "✘ LLM endpoint: cannot reach" in out
    assert "✘ Discord token: DISCORD_TOKEN is not set" in out
    assert "→ create a bot in the Discord developer portal" in out


def test_doctor_on_a_missing_database_does_not_create_it(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor"]) == 1
    assert "run `arca-bot seed`" in capsys.readouterr().out


def test_doctor_refuses_a_foreign_database_without_crashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    db = tmp_path / "other.db"
    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.commit()
    monkeypatch.setenv("ARCA_DB_URL", f"sqlite+aiosqlite:///{db}")
    assert main(["doctor"]) == 1
    assert "not Arca Support Bot's" in capsys.readouterr().out


def test_python_dash_m_bot_runs_the_same_cli(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "--version"], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("arca-bot ")


def test_the_command_line_loads_no_database_web_or_chat_library_before_a_command_needs_one() -> None:
    """Every command builds the whole parser first: a cold `arca-bot search` must not pay for SQLAlchemy,
    the HTTP client, Discord, FastAPI or the OpenAI client to parse its arguments (issue 51's cold start)."""
    heavy = ("sqlalchemy", "httpx", "discord", "fastapi", "openai", "chromadb")
    code = (
        "import sys; from bot.cli.parser import build_parser; build_parser(); "
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
    )
    assert done.stdout.strip() == "[]", done.stdout
