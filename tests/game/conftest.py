"""Fixtures of the game connection's tests: the reference game backend on a loopback port."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.store import Store
from tests.support.game_backend import GameBackend
from tests.support.game_events import EventsServer, start_events_server, stop_events_server


@pytest.fixture
def game_backend() -> Iterator[GameBackend]:
    with GameBackend() as backend:
        yield backend


@pytest.fixture
async def events(seeded_store: Store, tmp_path: Path) -> AsyncIterator[EventsServer]:
    """The bot's web server with the signed event endpoint on (`tests.support.game_events.SECRET`)."""
    server = await start_events_server(seeded_store, tmp_path)
    try:
        yield server
    finally:
        await stop_events_server(server)
