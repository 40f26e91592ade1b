"""The `arca-bot` command line: one subcommand per entry point of the product.

Configuration errors and unusable databases end with one clear line on stderr and exit 2;
logs go to stderr so stdout stays machine-readable where a command promises that (`search --json`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from bot import __version__
from bot.config import ConfigError, Settings, load_settings


def setup_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level, logging.INFO),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("httpx", "httpcore", "chromadb", "discord.gateway", "aiosqlite"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, getattr(logging, level, logging.INFO)))


def _settings() -> Settings:
    settings = load_settings()
    setup_logging(settings.log_level)
    return settings


def cmd_seed(args: argparse.Namespace) -> int:
    from bot.store import Store
    from bot.store.seed import DEFAULT_SEED, apply_seed, load_seed_file

    settings = _settings()
    path = Path(args.file) if args.file else DEFAULT_SEED
    seed = load_seed_file(path)

    async def go() -> None:
        store = Store(settings.database_url)
        await store.open()
        try:
            report = await apply_seed(store, seed)
        finally:
            await store.close()
        print(
            f"seeded {path.name}: +{report.players_added} players, +{report.orders_added} orders, "
            f"+{report.coupons_added} coupons" + ("" if report.changed else " (already up to date)")
        )

    asyncio.run(go())
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from bot.doctor import doctor_command

    return doctor_command()


def cmd_index(args: argparse.Namespace) -> int:
    from bot.knowledge.commands import index_command

    settings = _settings()
    return index_command(settings, Path(args.policies) if args.policies else None)


def cmd_search(args: argparse.Namespace) -> int:
    from bot.knowledge.commands import search_command

    settings = _settings()
    return search_command(settings, args.query, args.top_k, args.json)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arca-bot", description="Arca Online customer-support and game-ops bot (아르카 온라인 상담 봇)"
    )
    parser.add_argument("--version", action="version", version=f"arca-bot {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("seed", help="load the demo players and orders (idempotent)")
    p.add_argument("--file", help="seed YAML (default: data/demo_seed.yaml)")
    p.set_defaults(fn=cmd_seed)

    p = sub.add_parser("doctor", help="check configuration, database, embedder, LLM and Discord")
    p.set_defaults(fn=cmd_doctor)

    p = sub.add_parser("index", help="rebuild the policy index from a directory of Markdown policies")
    p.add_argument("--policies", help="policy directory (default: policies/)")
    p.set_defaults(fn=cmd_index)

    p = sub.add_parser("search", help="search the policy index")
    p.add_argument("query")
    p.add_argument("--top-k", type=int, default=3, dest="top_k")
    p.add_argument("--json", action="store_true", help="print one JSON array on stdout")
    p.set_defaults(fn=cmd_search)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "fn", None):
        parser.print_help()
        return 2
    from bot.store import StoreError
    from bot.store.seed import SeedError

    try:
        return int(args.fn(args) or 0)
    except ConfigError as exc:
        print(f"arca-bot: configuration error: {exc}", file=sys.stderr)
        return 2
    except (StoreError, SeedError) as exc:
        print(f"arca-bot: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
