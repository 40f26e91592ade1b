"""What `arca-bot doctor` reports of an open database: how many players and orders it holds, the
server's version (PostgreSQL) and the schema version the store accepted."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select, text

from bot.store.database import Store
from bot.store.models import Order, Player, SchemaMeta


@dataclass(frozen=True)
class DatabaseFacts:
    players: int
    orders: int
    server_version: str | None
    """`15.18` on PostgreSQL; None on SQLite."""
    schema_version: str | None


async def database_facts(store: Store) -> DatabaseFacts:
    """Counts and versions of the open store's database, read in one session."""
    async with store.session() as s:
        players = (await s.execute(select(func.count()).select_from(Player))).scalar_one()
        orders = (await s.execute(select(func.count()).select_from(Order))).scalar_one()
        server = None
        if store.dialect == "postgresql":
            server = str((await s.execute(text("SHOW server_version"))).scalar_one()).split()[0]
        version = (
            await s.execute(select(SchemaMeta.value).where(SchemaMeta.key == "schema_version"))
        ).scalar_one_or_none()
    return DatabaseFacts(int(players), int(orders), server, version)
