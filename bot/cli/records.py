"""Commands on what the store holds: `seed` (demo players and orders), `stats` (support analytics) and
`console-link` (a one-time staff console sign-in link)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from bot.cli.preflight import CommandError, checked_settings


def cmd_seed(args: argparse.Namespace) -> int:
    from bot.app import coupon_rules_path
    from bot.store import Store
    from bot.store.seed import DEFAULT_SEED, apply_seed, load_seed_file
    from tools.coupon_rules import load_coupon_rules

    settings = checked_settings()
    path = Path(args.file) if args.file else DEFAULT_SEED
    seed = load_seed_file(path)
    seed.check_coupon_amounts(load_coupon_rules(coupon_rules_path(settings)).staff_max_amount)

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


def cmd_console_link(args: argparse.Namespace) -> int:
    """Print a one-time staff console sign-in link (stored hashed; 5 minutes, single use)."""
    from bot.staff.console import console_base_url, mint_link
    from bot.store import Store

    settings = checked_settings()
    name = " ".join(args.name.split())[:100]
    if not name:
        raise CommandError("NAME must not be empty")

    async def go() -> str:
        store = Store(settings.database_url)
        await store.open()
        try:
            return await mint_link(store, staff_id=name, staff_name=name, base=console_base_url(settings))
        finally:
            await store.close()

    print(asyncio.run(go()))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    import json

    from bot.analytics.staff_response import SlaTargets
    from bot.analytics.stats import compute_stats, format_stats
    from bot.store import Store

    settings = checked_settings()

    async def go() -> dict:
        store = Store(settings.database_url)
        await store.open()
        try:
            return await compute_stats(
                store,
                days=args.days,
                idle_minutes=settings.conversation_idle_minutes,
                resolution_window_minutes=settings.resolution_window_minutes,
                zone=settings.tz,
                sla=SlaTargets.from_settings(settings),
            )
        finally:
            await store.close()

    stats = asyncio.run(go())
    if args.json:
        print(json.dumps(stats, ensure_ascii=False, indent=2))
    else:
        print(format_stats(stats, args.days))
    return 0
