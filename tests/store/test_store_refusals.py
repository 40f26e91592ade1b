"""A database that is not ours is left byte-identical; unusable storage paths are one clear line."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from bot.cli import main
from bot.store import Store, StoreError
from tests.support.store import sqlite_url


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()}


def _foreign(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE inventory (id INTEGER PRIMARY KEY, item TEXT)")
    con.execute("INSERT INTO inventory (item) VALUES ('sword')")
    con.commit()
    con.close()
    return path


async def _newer(path: Path) -> Path:
    store = Store(sqlite_url(path))
    await store.open()
    await store.close()
    con = sqlite3.connect(path)
    # A rollback-journal file (before any write, or the pragma is ignored): WAL would change its header.
    assert con.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
    con.execute("UPDATE schema_meta SET value = '99' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    assert path.read_bytes()[18:20] == b"\x01\x01"
    return path


async def test_a_foreign_sqlite_file_is_byte_identical_after_the_refusal(tmp_path: Path) -> None:
    db = _foreign(tmp_path / "other.db")
    before, names = _sha(db), _files(tmp_path)
    with pytest.raises(StoreError, match="not Arca Support Bot's"):
        await Store(sqlite_url(db)).open()
    assert _sha(db) == before
    assert _files(tmp_path) == names  # no -wal / -shm left behind either


async def test_a_newer_schema_file_is_byte_identical_after_the_refusal(tmp_path: Path) -> None:
    db = await _newer(tmp_path / "arca.db")
    before = _sha(db)
    with pytest.raises(StoreError, match="newer than this bot understands"):
        await Store(sqlite_url(db)).open()
    assert _sha(db) == before


def test_seed_on_a_foreign_database_leaves_it_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "var"
    data.mkdir()
    db = _foreign(data / "arca.db")
    before = _sha(db)
    monkeypatch.setenv("ARCA_DATA_DIR", str(data))
    assert main(["seed"]) == 2
    assert "refusing to touch it" in capsys.readouterr().err
    assert _sha(db) == before


async def test_a_garbled_file_is_a_clear_store_error(tmp_path: Path) -> None:
    db = tmp_path / "arca.db"
    db.write_bytes(b"this is not a database at all\n" * 200)
    before = _sha(db)
    with pytest.raises(StoreError, match="not a SQLite database"):
        await Store(sqlite_url(db)).open()
    assert _sha(db) == before


async def test_our_own_wal_database_still_opens(tmp_path: Path) -> None:
    db = tmp_path / "arca.db"
    for _ in range(2):
        store = Store(sqlite_url(db))
        await store.open()
        await store.close()
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()


def test_a_data_dir_that_is_a_regular_file_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    not_a_dir = tmp_path / "var"
    not_a_dir.write_text("oops", encoding="utf-8")
    monkeypatch.setenv("ARCA_DATA_DIR", str(not_a_dir))
    assert main(["seed"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"arca-bot: ARCA_DATA_DIR: {not_a_dir} is a file, not a folder"
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert f"✘ configuration: ARCA_DATA_DIR: {not_a_dir} is a file, not a folder" in out


def test_a_sqlite_url_below_a_regular_file_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "plain.txt"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("ARCA_DB_URL", sqlite_url(blocker / "sub" / "arca.db"))
    assert main(["seed"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"arca-bot: ARCA_DB_URL: {blocker / 'sub'} cannot be created: {blocker} is a file"
    assert main(["doctor"]) == 1
    assert f"✘ configuration: ARCA_DB_URL: {blocker / 'sub'} cannot be created" in capsys.readouterr().out


async def test_store_open_below_a_regular_file_is_a_store_error_not_a_traceback(tmp_path: Path) -> None:
    blocker = tmp_path / "plain.txt"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(StoreError, match="cannot open database"):
        await Store(sqlite_url(blocker / "arca.db")).open()


def test_a_failed_open_leaves_no_thread_to_die_after_the_event_loop_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`seed` on an unusable data dir printed "RuntimeError: Event loop is closed" after its clear error:
    the SQLite driver's worker thread was still finishing when `asyncio.run` closed the loop."""
    import asyncio
    import threading

    died: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: died.append(args.exc_value))
    monkeypatch.chdir(tmp_path)
    url = f"sqlite+aiosqlite:///file:{tmp_path / 'missing' / 'arca.db'}?mode=ro&uri=true"
    for _ in range(30):
        with pytest.raises(StoreError, match="unable to open database file"):
            asyncio.run(Store(url).open())
    for thread in threading.enumerate():
        if "_connection_worker_thread" in thread.name:
            thread.join(timeout=5)
    assert died == []
    assert not (tmp_path / "file:").exists()  # a SQLite URI filename is not a folder path to create
