"""Fixtures of the game connection's tests: the reference game backend on a loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.game_backend import GameBackend


@pytest.fixture
def game_backend() -> Iterator[GameBackend]:
    with GameBackend() as backend:
        yield backend
