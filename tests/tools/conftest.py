"""Fixtures for the tool tests: a real SQLite file store with two players and their orders, the registry.
(The coupon rules, the clock and `ctx_for` are the suite's, in tests/conftest.py.)"""

from __future__ import annotations

import pytest

from bot.store import Store
from tests.support.tools import seed
from tools.registry import build_registry


@pytest.fixture
async def store(store: Store) -> Store:
    """The suite's SQLite store (tests/conftest.py) with the rows above."""
    await seed(store)
    return store


@pytest.fixture
def registry():
    return build_registry()
