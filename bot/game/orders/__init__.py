"""Where the bot reads orders (DESIGN.md §11): one `OrderSource` seam, builtin (the embedded table) or
http (the studio's backend), chosen by ARCA_ORDER_SOURCE; every reader of orders goes through it."""

from __future__ import annotations

from typing import Any

from bot.game.orders.http import HttpOrderSource
from bot.game.orders.source import BuiltinOrderSource, OrderSource, PlayerOrders, SourceUnavailable
from bot.store import OrderRecord, Store


def make_order_source(settings: Any, store: Store) -> OrderSource:
    """The configured source; the http one mirrors each order it reads into `store`'s orders table."""
    if getattr(settings, "order_source", "builtin") == "http":
        return HttpOrderSource.from_settings(settings, mirror=store.orders.mirror)
    return BuiltinOrderSource(store)


__all__ = [
    "BuiltinOrderSource",
    "HttpOrderSource",
    "OrderRecord",
    "OrderSource",
    "PlayerOrders",
    "SourceUnavailable",
    "make_order_source",
]
