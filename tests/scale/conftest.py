"""Fixtures for the scale-out tests: the same store on SQLite and on a real PostgreSQL server, a seeded
ledger, and the Chroma server URL.

PostgreSQL and Chroma come from `scripts/services.sh start` (ARCA_TEST_PG_URL, ARCA_TEST_CHROMA_URL).
Without them a `postgres` / `chroma_server` test skips on a developer machine and FAILS under CI.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.store import Store
from tests.support.scale import seed_ledger


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    st = Store(db_url)
    await st.open()
    await seed_ledger(st)
    try:
        yield st
    finally:
        await st.close()
