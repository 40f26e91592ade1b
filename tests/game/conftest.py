"""Fixtures of the game connection's tests: the reference game backend on a loopback port, the bot's
signed event endpoint, and a player's linking path end to end."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.store import Store
from tests.support.discord import BotHarness
from tests.support.game_backend import GameBackend
from tests.support.game_events import (
    EventsServer,
    LinkingWorld,
    start_events_server,
    start_linking_world,
    stop_events_server,
)


@pytest.fixture
async def events(seeded_store: Store, tmp_path: Path) -> AsyncIterator[EventsServer]:
    """The bot's web server with the signed event endpoint on (`tests.support.game_events.SECRET`)."""
    server = await start_events_server(seeded_store, tmp_path)
    try:
        yield server
    finally:
        await stop_events_server(server)


@pytest.fixture
async def linking(harness: BotHarness, game_backend: GameBackend) -> AsyncIterator[LinkingWorld]:
    """The bot on the fake Discord with its event endpoint on, and the reference backend sending to it."""
    world = await start_linking_world(harness, game_backend)
    try:
        yield world
    finally:
        await world.web.stop()
