"""Shared fixtures: an isolated environment, a real SQLite store (empty or seeded with the demo data)."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.store import Store
from bot.store.seed import DEFAULT_SEED, apply_seed, load_seed_file

_ARCA_ENV = (
    "DISCORD_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ARCA_MODEL",
    "ARCA_FAST_MODEL",
    "ARCA_DATA_DIR",
    "ARCA_DB_URL",
    "ARCA_CHROMA_URL",
    "ARCA_EMBEDDING_MODEL",
    "ARCA_STAFF_ROLE",
    "ARCA_STAFF_CHANNEL",
    "ARCA_SUPPORT_CHANNELS",
    "ARCA_ALLOW_DMS",
    "ARCA_TIMEZONE",
    "ARCA_CONFIG",
)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's configuration or writes into the checkout's ./var."""
    for name in _ARCA_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ARCA_CONFIG", "")  # empty: no configuration file
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _root_log_handlers_restored():
    """`main()` installs a stderr log handler bound to the test's captured stream; a later test must
    not log into that closed stream."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    yield
    for handler in [h for h in root.handlers if h not in before]:
        root.removeHandler(handler)
    root.setLevel(level)


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    s = Store(sqlite_url(tmp_path / "arca.db"))
    await s.open()
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
async def seeded_store(store: Store) -> Store:
    await apply_seed(store, load_seed_file(DEFAULT_SEED))
    return store


def pytest_report_header(config: pytest.Config) -> str:
    return f"arca: cores={os.cpu_count()}"


@pytest.fixture(scope="session")
def policy_index(tmp_path_factory: pytest.TempPathFactory):
    """The project's real policy index (e5 embedder, embedded Chroma), built once per test session."""
    from bot.app import PROJECT_ROOT
    from bot.knowledge.embedders import E5Embedder
    from bot.knowledge.index import PolicyIndex

    index = PolicyIndex(
        E5Embedder(),
        chroma_dir=tmp_path_factory.mktemp("policy-index"),
        policies_dir=PROJECT_ROOT / "policies",
    )
    index.ensure_built(PROJECT_ROOT / "policies")
    return index
