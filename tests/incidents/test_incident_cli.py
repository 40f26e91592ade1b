"""`arca-bot incident open|list|show|close|report ID [--json]` on the configured store, with a CSV of
affected players, and the report as JSON and CSV."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("ARCA_DB_URL", "DISCORD_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ARCA_MODEL"):
        monkeypatch.delenv(name, raising=False)
    d = tmp_path / "var"
    monkeypatch.setenv("ARCA_DATA_DIR", str(d))
    return d


def test_incident_open_list_show_close_and_report_from_the_command_line(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["seed"]) == 0
    csv_file = tmp_path / "players.csv"
    csv_file.write_text("player_id,name\nP100,루나\nP200,솔\n", encoding="utf-8")
    capsys.readouterr()
    assert (
        main(
            [
                "incident",
                "open",
                "--title",
                "서버 점검 연장",
                "--notice-ko",
                "점검이 2시간 연장됩니다.",
                "--players-csv",
                str(csv_file),
                "--json",
            ]
        )
        == 0
    )
    opened = json.loads(capsys.readouterr().out)
    assert opened["scope"] == {"kind": "players", "player_ids": ["P100", "P200"]}
    assert main(["incident", "list"]) == 0
    assert f"#{opened['id']} [open] 서버 점검 연장" in capsys.readouterr().out
    assert main(["incident", "show", str(opened["id"])]) == 0
    assert "점검이 2시간 연장됩니다." in capsys.readouterr().out
    assert main(["incident", "close", str(opened["id"]), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "closed" and report["compensation"]["krw_spent"] == 0
    assert main(["incident", "report", str(opened["id"]), "--csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "kind,key,value"
    with pytest.raises(SystemExit, match="no incident #999"):
        main(["incident", "show", "999"])
