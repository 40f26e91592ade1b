"""Fixtures for the transcript replay tests: settings on a temp data dir, a `Replayer` on the shared
session policy index, a session data dir for CLI subprocesses (their index is built there once), and
a helper that writes a transcript file.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.config import Settings, load_settings
from bot.replay.runner import Replayer


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(data_dir=tmp_path / "data")


@pytest.fixture
def replayer(settings: Settings, policy_index) -> Replayer:  # type: ignore[no-untyped-def]
    return Replayer(settings, policy_index=policy_index)


@pytest.fixture
def write_case(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write `text` as `<tmp>/cases/<file>` and return its path."""

    def write(file: str, text: str) -> Path:
        path = tmp_path / "cases" / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def cli_data_dir(tmp_path_factory: pytest.TempPathFactory, policy_index: Any) -> Path:
    """One data dir for every CLI subprocess of the session, holding a copy of the session's policy
    index (same embedder, same documents), so no subprocess spends ~12 s building its own."""
    data_dir = tmp_path_factory.mktemp("cli-data")
    built = getattr(policy_index, "_chroma_dir", None)
    if built is not None and Path(built).is_dir():
        shutil.copytree(built, data_dir / "chroma")
    return data_dir
