"""Where the bot reads orders (DESIGN.md §11): one `OrderSource` seam, builtin (the embedded table) or
http (the studio's backend), chosen by ARCA_ORDER_SOURCE; every reader of orders goes through it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.game.orders.http import HttpOrderSource
    from bot.game.orders.source import BuiltinOrderSource, OrderSource, PlayerOrders, SourceUnavailable
    from bot.store import OrderRecord, Store

_WHERE = {
    "HttpOrderSource": "bot.game.orders.http",
    "BuiltinOrderSource": "bot.game.orders.source",
    "OrderSource": "bot.game.orders.source",
    "PlayerOrders": "bot.game.orders.source",
    "SourceUnavailable": "bot.game.orders.source",
    "OrderRecord": "bot.store",
}
"""Where each name lives: imported on first use, so a command that only builds the CLI's parser (the
`orders` command's arguments live in `bot.game.orders.cli`) does not load the store and HTTP client."""


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def make_order_source(settings: Any, store: Store) -> OrderSource:
    """The configured source; the http one mirrors each order it reads into `store`'s orders table."""
    from bot.game.orders.http import HttpOrderSource
    from bot.game.orders.source import BuiltinOrderSource

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
