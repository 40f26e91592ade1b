"""The real SQLite store the tests open: its URL for a file path."""

from __future__ import annotations

from pathlib import Path


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"
