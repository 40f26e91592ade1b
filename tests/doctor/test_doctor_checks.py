"""`arca-bot doctor` hides URL passwords and finds a damaged database."""

from __future__ import annotations

import re
import socket
import sqlite3
from pathlib import Path

import pytest

from bot.app import PROJECT_ROOT
from bot.cli import main

PASSWORD = "s3cretPASSWORDvalue"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_doctor_never_prints_a_url_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("ARCA_MODEL", "m")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://arca:{PASSWORD}@127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("ARCA_CHROMA_URL", f"http://arca:{PASSWORD}@127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("ARCA_DB_URL", f"postgresql+asyncpg://arca:{PASSWORD}@127.0.0.1:{_closed_port()}/arca")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert PASSWORD not in out
    assert "cannot reach http://arca:***@127.0.0.1" in out
    assert "Chroma server at http://arca:***@127.0.0.1" in out
    pointers = re.findall(r"docs/[\w/.-]+\.md", out)
    assert [p for p in pointers if not (PROJECT_ROOT / p).is_file()] == []  # every pointer leads to a page


def test_doctor_runs_an_integrity_check_on_a_damaged_sqlite_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "var"
    monkeypatch.setenv("ARCA_DATA_DIR", str(data))
    assert main(["seed"]) == 0
    db = data / "arca.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=DELETE")
    page_size = con.execute("PRAGMA page_size").fetchone()[0]
    pages = con.execute("PRAGMA page_count").fetchone()[0]
    (meta_page,) = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'schema_meta'").fetchone()
    con.close()
    assert pages > 4
    raw = bytearray(db.read_bytes())
    # The schema page and schema_meta stay readable (the file still looks like ours); every other
    # b-tree page gets scribbled over, as a disk error or a half-copied file would.
    for page in range(2, pages + 1):
        if page == meta_page:
            continue
        start = (page - 1) * page_size + 8
        raw[start : start + 64] = b"\xff" * 64
    db.write_bytes(bytes(raw))
    capsys.readouterr()
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "✘ database:" in out and "integrity check" in out, out


def _policies_without_questions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shipped policies without their questions files, as ARCA_POLICIES_DIR."""
    import shutil

    folder = tmp_path / "policies"
    shutil.copytree(Path(__file__).resolve().parents[2] / "policies", folder)
    for old in folder.glob("*.questions.yaml"):
        old.unlink()
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("ARCA_POLICIES_DIR", str(folder))
    return folder


def test_doctor_warns_when_a_sections_questions_were_written_from_an_older_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.knowledge.questions import QuestionFile, SectionQuestions, write_questions

    folder = _policies_without_questions(tmp_path, monkeypatch)
    entry = SectionQuestions(section="1. 청약 철회 기간", hash="0" * 16, questions=("refund window?",))
    write_questions(folder / "refunds.md", QuestionFile(document="refunds.md", sections=(entry,)))
    main(["doctor"])
    line = next(x for x in capsys.readouterr().out.splitlines() if "policy document(s)" in x)
    assert "questions for 0 of" in line and "1 stale" in line
    assert "arca-bot questions" in line or "stale section" in line


def test_doctor_warns_until_staff_have_reviewed_a_models_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.knowledge.documents import parse_policy
    from bot.knowledge.questions import QuestionFile, SectionQuestions, write_questions

    folder = _policies_without_questions(tmp_path, monkeypatch)
    sections = parse_policy(folder / "refunds.md").sections
    entries = tuple(
        SectionQuestions(section=s.title, hash=s.hash, questions=("환불 돼요?",)) for s in sections
    )

    def policies_lines(model: str) -> list[str]:
        write_questions(
            folder / "refunds.md", QuestionFile(document="refunds.md", model=model, sections=entries)
        )
        assert main(["doctor"]) in (0, 1)
        out = capsys.readouterr().out.splitlines()
        at = next(i for i, x in enumerate(out) if "policy document(s)" in x)
        return out[at : at + 2]

    draft = policies_lines("qwen2.5-coder-1.5b")
    assert draft[0].startswith("! policies:"), draft
    assert f"questions for {len(sections)} of" in draft[0] and f"{len(sections)} not reviewed" in draft[0]
    assert "model: staff" in draft[1]
    reviewed = policies_lines("staff")
    assert reviewed[0].startswith("✔ policies:") and "not reviewed" not in reviewed[0], reviewed
