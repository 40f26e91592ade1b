"""Fixtures for the reliability suite: a recording surface, an app on a real temp SQLite store seeded with
the demo data, scripted models for the run-of-the-mill turns, and the environment for CLI subprocesses.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.app import PROJECT_ROOT, App
from bot.store import Store
from tests.support.reliability import start_app


@pytest.fixture
async def app_factory(seeded_store: Store, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """`await app_factory(llm_factory, **options)` → an App on the seeded temp store."""

    async def make(llm_factory: Callable[[], Any], **options: Any) -> App:
        return await start_app(seeded_store, tmp_path, llm_factory, **options)

    yield make


@pytest.fixture
def small_policies(tmp_path: Path) -> Path:
    """A one-document policy directory (plus the coupon rules): a subprocess builds its index in seconds."""
    directory = tmp_path / "policies"
    directory.mkdir()
    for name in ("coupon_rules.yaml", "delivery.md"):
        shutil.copy(PROJECT_ROOT / "policies" / name, directory / name)
    return directory


@pytest.fixture
def cli_env(tmp_path: Path, small_policies: Path) -> dict[str, str]:
    """Environment for an `arca-bot` subprocess: its own data dir, the small policy set, no config file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARCA_", "OPENAI_", "DISCORD_"))}
    env.update(
        ARCA_DATA_DIR=str(tmp_path / "var"),
        ARCA_POLICIES_DIR=str(small_policies),
        ARCA_CONFIG="",
        ARCA_LLM_MAX_RETRIES="0",
        ARCA_EDIT_INTERVAL="0",
        HF_HUB_OFFLINE="1",
        ANONYMIZED_TELEMETRY="False",
        PYTHONUNBUFFERED="1",
        PYTHONPATH=str(PROJECT_ROOT),
    )
    return env
