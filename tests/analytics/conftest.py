"""Fixtures for the analytics tests: a store on SQLite and (under the `postgres` marker) PostgreSQL,
and a seeded support history whose every figure is computed by hand in `history.py`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.store import Store


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    """An open store on an empty database (the tests seed their own history)."""
    st = Store(db_url)
    await st.open()
    try:
        yield st
    finally:
        await st.close()
