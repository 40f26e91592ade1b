"""`arca-bot orders import FILE`: the builtin order source's import (CSV or JSONL, all or nothing)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the store and the importer load only when the command runs: every other command
    # (a cold `arca-bot search`) builds this parser too and would import SQLAlchemy for nothing
    from bot.config import Settings


def add_orders_parser(sub: Any, settings: Callable[[], Settings], error: type[Exception]) -> None:
    """The `orders` command; `settings` loads and checks the configuration, `error` is the CLI's one-line
    failure (exit 2)."""
    p = sub.add_parser("orders", help="the builtin orders table: import orders from a CSV or JSONL file")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    imp = actions.add_parser(
        "import",
        help="validate every line, then import them all in one transaction (nothing on any error)",
        description="CSV with a header (id,player_id,status,item,amount[,currency,ordered_at,updated_at]) "
        "or JSONL (one order object per line). Times need an offset, e.g. 2026-03-01T10:00:00+09:00.",
    )
    imp.add_argument("file", metavar="FILE")

    def command(args: argparse.Namespace) -> int:
        from bot.game.orders.importer import OrderFileError, import_orders
        from bot.store import Store

        conf = settings()
        if conf.order_source != "builtin":
            raise error(
                "orders import fills the builtin orders table, but ARCA_ORDER_SOURCE=http reads orders "
                "from the game's backend; unset ARCA_ORDER_SOURCE (or set it to builtin) to import"
            )

        async def go() -> Any:
            store = Store(conf.database_url)
            await store.open()
            try:
                return await import_orders(store, Path(args.file))
            finally:
                await store.close()

        try:
            report = asyncio.run(go())
        except OrderFileError as exc:
            raise error(str(exc)) from None
        print(f"imported {report.orders} order(s) from {args.file} (+{report.new_players} new player(s))")
        return 0

    imp.set_defaults(fn=command)
