"""Fixtures for the analytics tests: a store on SQLite and (under the `postgres` marker) PostgreSQL,
and a seeded support history whose every figure is computed by hand in `history.py`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.store import Store
from tests.scale.conftest import BACKENDS, create_pg_database, drop_pg_database
from tests.scale.conftest import pytest_runtest_setup as _needs_services


def pytest_runtest_setup(item: pytest.Item) -> None:
    _needs_services(item)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def db_url(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'stats.db'}"
        return
    url = await create_pg_database()
    try:
        yield url
    finally:
        await drop_pg_database(url)


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    st = Store(db_url)
    await st.open()
    try:
        yield st
    finally:
        await st.close()
