"""`arca-bot incident open|list|show|close|report ID [--json]` (DESIGN.md §10): the operator's view of
incidents without Discord or a model. `report --csv` prints the report as CSV."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.store import Store
    from bot.store.incidents import IncidentRecord

# The store, the report and the scope parser are imported by the actions that use them: this module is
# imported by every `arca-bot` command to build the parser, and the store alone costs ~0.7 s of CPU.

OPERATOR = "cli"


def _view(i: IncidentRecord) -> dict[str, Any]:
    data = asdict(i)
    data["scope"] = json.loads(i.scope.to_json())
    return {k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in data.items()}


def _text(i: IncidentRecord) -> str:
    return f"#{i.id} [{i.status}] {i.title} · v{i.notice_version} · {i.notice_ko}"


async def _open(store: Store, args: argparse.Namespace, settings: Settings) -> tuple[Any, str]:
    from bot.incidents.scope import ScopeError, parse_scope, players_from_csv
    from bot.store import utcnow
    from bot.store.incident_scope import IncidentScope

    try:
        scope = parse_scope(args.scope, zone=settings.timezone)
    except ScopeError as exc:
        raise SystemExit(f"arca-bot: {exc}") from None
    if args.players_csv:
        ids = players_from_csv(Path(args.players_csv).read_text(encoding="utf-8"))
        scope = IncidentScope("players", scope.statuses, scope.item, scope.since, scope.until, ids)
    i = await store.incidents.open(
        title=args.title,
        notice_ko=args.notice_ko,
        notice_en=args.notice_en or "",
        scope=scope,
        actor=OPERATOR,
        now=utcnow(),
    )
    return _view(i), _text(i)


async def _one(store: Store, args: argparse.Namespace, _settings: Settings) -> tuple[Any, str]:
    from bot.incidents.report import build_report, format_report, report_csv
    from bot.store import utcnow

    action = args.action
    i = await store.incidents.get(args.id)
    if i is None:
        raise SystemExit(f"arca-bot: no incident #{args.id}")
    if action == "show":
        return _view(i), _text(i) + f"\n  en: {i.notice_en}\n  scope: {i.scope.to_json()}"
    if action == "close":
        i = await store.incidents.close(args.id, actor=OPERATOR, now=utcnow()) or i
    report = await build_report(store, i, now=utcnow())
    if getattr(args, "csv", False):
        return report, report_csv(report)
    return report, format_report(report)


async def _list(store: Store, _args: argparse.Namespace, _settings: Settings) -> tuple[Any, str]:
    found = await store.incidents.list()
    return [_view(i) for i in found], "\n".join(_text(i) for i in found) or "no incidents"


def add_incident_parser(sub: Any, settings: Callable[[], Settings]) -> None:
    """The `incident` command and its actions; `settings` loads and checks the configuration."""
    p = sub.add_parser("incident", help="declare, list, show, close and report incidents")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    o = actions.add_parser("open", help="declare an incident")
    o.add_argument("--title", required=True)
    o.add_argument("--notice-ko", required=True, help="the player-facing notice in Korean")
    o.add_argument("--notice-en", help="the notice in English")
    o.add_argument("--scope", default="all", help="all | status=delayed item=… since=2026-03-01 until=…")
    o.add_argument("--players-csv", help="a CSV of the affected players (player_id column or first column)")
    o.set_defaults(run=_open)
    actions.add_parser("list", help="every incident, newest first").set_defaults(run=_list)
    for name in ("show", "close", "report"):
        a = actions.add_parser(name, help=f"{name} an incident")
        a.add_argument("id", type=int, metavar="ID")
        if name == "report":
            a.add_argument("--csv", action="store_true", help="print the report as CSV")
        a.set_defaults(run=_one)
    for a in actions.choices.values():
        a.add_argument("--json", action="store_true", help="print JSON only")

    def command(args: argparse.Namespace) -> int:
        conf = settings()

        async def go() -> tuple[Any, str]:
            from bot.store import Store

            store = Store(conf.database_url)
            await store.open()
            try:
                run: Callable[..., Awaitable[tuple[Any, str]]] = args.run
                return await run(store, args, conf)
            finally:
                await store.close()

        data, text = asyncio.run(go())
        print(json.dumps(data, ensure_ascii=False, indent=2, default=str) if args.json else text)
        return 0

    p.set_defaults(fn=command)
