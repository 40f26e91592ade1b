"""The one seam every reader of orders goes through (`OrderSource`), and its builtin kind: the embedded
orders table (the demo seed, `arca-bot orders import`, the game's signed events)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

from bot.store import OrderRecord, Store


class SourceUnavailable(Exception):
    """The order source could not answer fresh (connection refused, timeout, 5xx, 429, an open circuit,
    or an answer refused as bad data). `reason` is one loggable line; never holds the token."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class PlayerOrders:
    """A player's newest orders, and how many they have in all (None when the source does not say)."""

    orders: list[OrderRecord] = field(default_factory=list)
    total: int | None = None


@runtime_checkable
class OrderSource(Protocol):
    """Where orders are read. Raises `SourceUnavailable` when it cannot answer; never returns data it
    could not validate."""

    name: str
    """`builtin` or `http` (ARCA_ORDER_SOURCE)."""

    async def order(self, order_id: str, *, fresh: bool = False) -> OrderRecord | None:
        """The order `order_id`, None when the source has none. `fresh`: never from a cache (a coupon's
        eligibility is decided on a fresh read only)."""
        ...

    async def player_orders(self, player_id: str, *, limit: int, status: str | None = None) -> PlayerOrders:
        """The player's newest `limit` orders (optionally only of `status`)."""
        ...

    def search(
        self, *, statuses: tuple[str, ...] = (), since: datetime | None = None, until: datetime | None = None
    ) -> AsyncIterator[list[OrderRecord]]:
        """Pages of the orders of `statuses` last updated in [since, until) (an incident's scope)."""
        ...

    async def forget(self, order_id: str) -> None:
        """Drop a cached copy of `order_id` (an `order.upserted` event says it changed)."""
        ...

    async def close(self) -> None: ...


class BuiltinOrderSource:
    """The embedded orders table: always fresh, never unavailable (the database is the bot's own)."""

    name = "builtin"

    def __init__(self, store: Store) -> None:
        self._store = store

    async def order(self, order_id: str, *, fresh: bool = False) -> OrderRecord | None:
        return await self._store.orders.get(order_id)

    async def player_orders(self, player_id: str, *, limit: int, status: str | None = None) -> PlayerOrders:
        orders, total = await self._store.orders.of_player(player_id, limit=limit, status=status)
        return PlayerOrders(orders, total)

    async def search(
        self, *, statuses: tuple[str, ...] = (), since: datetime | None = None, until: datetime | None = None
    ) -> AsyncIterator[list[OrderRecord]]:
        # The builtin table is read by the incident's own queries; there is nothing to fetch.
        return
        yield []

    async def forget(self, order_id: str) -> None:
        return None

    async def close(self) -> None:
        return None
