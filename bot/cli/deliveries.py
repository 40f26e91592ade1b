"""`arca-bot deliveries list|retry|drain` (DESIGN.md §11.5): the outbox of grants into the game, seen and
worked from the command line — for an operator, cron and tests."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC
from typing import TYPE_CHECKING, Any

from bot.cli.preflight import CommandError, checked_settings

if TYPE_CHECKING:  # the store is imported when a command runs, not when the parser is built
    from bot.store import DeliveryView, Store

STATES = ("pending", "delivered", "dead")


def add_deliveries_parser(sub: Any) -> None:
    p = sub.add_parser("deliveries", help="grants and revokes posted to the game (ARCA_COUPON_DELIVERY=game)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    a = actions.add_parser("list", help="jobs newest first: pending, delivered and dead letters")
    a.add_argument("--state", choices=STATES, help="only jobs in this state")
    a.add_argument("--json", action="store_true", help="print one JSON array")
    a.add_argument("--limit", type=int, default=200, help="at most this many (default 200)")
    a.set_defaults(fn=_command(_list))
    a = actions.add_parser("retry", help="send a dead letter again (after the cause was fixed)")
    a.add_argument("grant_id", metavar="GRANT_ID")
    a.set_defaults(fn=_command(_retry))
    a = actions.add_parser(
        "drain", help="deliver everything pending, then exit (non-zero: dead letters remain)"
    )
    a.set_defaults(fn=_command(_drain))


def _command(
    run: Callable[[Store, argparse.Namespace, Any], Awaitable[int]],
) -> Callable[[argparse.Namespace], int]:
    def command(args: argparse.Namespace) -> int:
        settings = checked_settings()

        async def go() -> int:
            from bot.store import Store

            store = Store(settings.database_url, game_delivery=settings.coupon_delivery == "game")
            await store.open()
            try:
                return await run(store, args, settings)
            finally:
                await store.close()

        return asyncio.run(go())

    return command


def _line(job: DeliveryView) -> str:
    when = job.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")
    error = f"  ⚠ {job.last_error}" if job.last_error else ""
    return (
        f"{job.state:<9} {job.kind:<6} {job.grant_id}  order {job.order_id or '-'}  player {job.player_id}  "
        f"{job.amount:,}원  attempts {job.attempts}  {when}{error}"
    )


async def _list(store: Store, args: argparse.Namespace, settings: Any) -> int:
    found = await store.game_deliveries.list(state=args.state, limit=max(1, args.limit))
    if args.json:
        print(json.dumps([job.as_json() for job in found], ensure_ascii=False, indent=2))
        return 0
    counts = await store.game_deliveries.counts()
    print("  ".join(f"{state} {n:,}" for state, n in counts.items()))
    for job in found:
        print(_line(job))
    return 0


async def _retry(store: Store, args: argparse.Namespace, settings: Any) -> int:
    grant_id = args.grant_id.strip()
    changed = await store.game_deliveries.retry(grant_id)
    await store.audit(
        actor="cli", action="delivery.retry", target=grant_id, code="OK" if changed else "NOT_FOUND"
    )
    if not changed:
        print(f"arca-bot: no dead letter with grant id {grant_id}", file=sys.stderr)
        return 1
    print(
        f"{grant_id}: back in the queue ({changed} job{'s' if changed > 1 else ''}); a running worker or "
        "`arca-bot deliveries drain` posts it"
    )
    return 0


async def _drain(store: Store, args: argparse.Namespace, settings: Any) -> int:
    from bot.game.delivery.running import drain_worker

    if not settings.game_api_url:
        raise CommandError("ARCA_GAME_API_URL is not set: there is no game backend to deliver to")
    before = (await store.game_deliveries.counts())["delivered"]
    left = await drain_worker(settings, store).deliver_all()
    delivered = (await store.game_deliveries.counts())["delivered"] - before
    print(
        f"delivered {delivered:,}; dead letters {left.dead:,}; revokes waiting on a dead grant {left.blocked:,}"
    )
    if left.dead or left.blocked:
        print(
            "see `arca-bot deliveries list --state dead`; fix the cause, then `arca-bot deliveries retry GRANT_ID`"
        )
        return 1
    return 0
