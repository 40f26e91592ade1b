"""Start-up assembly shared by every entry point: open the store and seed an empty database."""

from __future__ import annotations

import logging

from bot.config import Settings
from bot.store import Store
from bot.store.seed import seed_if_empty

log = logging.getLogger(__name__)


async def open_store(settings: Settings, *, seed: bool = True) -> Store:
    """Open (creating if needed) the configured database; load the demo seed into an empty one."""
    store = Store(settings.database_url)
    await store.open()
    if seed:
        report = await seed_if_empty(store)
        if report is not None:
            log.info(
                "empty database seeded with the demo data: %s players, %s orders",
                report.players_added,
                report.orders_added,
            )
    return store
