"""Fixtures for the simulation tests: settings on a temp data dir and a helper that writes a scenario."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bot.config import Settings, load_settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(data_dir=tmp_path / "data")


@pytest.fixture
def write_scenario(tmp_path: Path) -> Callable[[str, str], Path]:
    def write(file: str, text: str) -> Path:
        path = tmp_path / "scenarios" / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return write
