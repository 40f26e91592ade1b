"""Players' storage: who is behind a Discord account, and the contact details the output guard lets a
player see of their own."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import bindparam, select

from bot.store.models import Player
from bot.store.units import Fetch, Unit, UnitRunner

_BY_DISCORD_ID = select(Player.id).where(Player.discord_id == bindparam("discord_id"))
_CONTACTS = select(Player.phone, Player.email).where(Player.id == bindparam("player_id"))


@dataclass(frozen=True)
class Contacts:
    """A player's own phone numbers and e-mail addresses on file (empty when none)."""

    phones: tuple[str, ...] = ()
    emails: tuple[str, ...] = ()


class Players:
    """`store.players`: the account link and a player's contacts."""

    def __init__(self, store: UnitRunner) -> None:
        self._store = store

    async def id_for_discord(self, discord_id: str) -> str | None:
        """The player linked to this Discord account, or None when it is not linked."""

        def unit() -> Unit[str | None]:
            row = yield Fetch(_BY_DISCORD_ID, {"discord_id": str(discord_id)}, one=True)
            return row[0] if row else None

        return await self._store.run(unit, write=False, snapshot=False)

    async def by_id(self, player_id: str) -> Player | None:
        """The player row of `player_id` (name, Discord link), None when there is none."""
        async with self._store.session() as s:
            return await s.get(Player, player_id)

    async def contacts(self, player_id: str) -> Contacts:
        """The player's phone and e-mail on file."""

        def unit() -> Unit[Contacts]:
            row = yield Fetch(_CONTACTS, {"player_id": player_id}, one=True)
            if row is None:
                return Contacts()
            return Contacts(tuple(p for p in [row[0]] if p), tuple(e for e in [row[1]] if e))

        return await self._store.run(unit, write=False, snapshot=False)
