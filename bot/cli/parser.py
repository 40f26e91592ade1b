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
from bot.redaction import redact_urls


class CommandError(Exception):
    """The command cannot run as configured; one line for the operator, exit 2."""


def _settings() -> Settings:
    from bot.doctor import storage_problem
    from bot.observability import configure_logging

    settings = load_settings()
    problem = storage_problem(settings)
    if problem:
        raise CommandError(problem)
    configure_logging(settings)
    return settings


def _quiet_logs_for_a_person(settings: Settings) -> None:
    """`chat` and `demo` are read by a person on the same terminal as stderr: INFO lines (database
    seeded, index built, HTTP requests) would land between the conversation's lines. WARNING and up
    still show; an operator who sets ARCA_LOG_LEVEL (env or arca.toml) gets exactly that level."""
    if "log_level" not in settings.model_fields_set:
        logging.getLogger().setLevel(logging.WARNING)


def _require_policies(settings: Settings) -> None:
    """The policy documents and coupon rules load (the same check as `doctor`), before anything starts."""
    from bot.doctor import policies_problem

    problem, _ = policies_problem(settings)
    if problem:
        raise CommandError(problem)


def cmd_seed(args: argparse.Namespace) -> int:
    from bot.app import coupon_rules_path
    from bot.store import Store
    from bot.store.seed import DEFAULT_SEED, apply_seed, load_seed_file
    from tools.coupon_rules import load_coupon_rules

    settings = _settings()
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


def cmd_chat(args: argparse.Namespace) -> int:
    from bot.app import build_app
    from bot.channels.console import run_console

    settings = _settings()
    _require_policies(settings)
    _quiet_logs_for_a_person(settings)
    if not settings.llm_configured:
        print(
            "arca-bot: no LLM configured. Set ARCA_MODEL and OPENAI_API_KEY or OPENAI_BASE_URL "
            "(see README), or run `arca-bot demo` to see the scripted pipeline.",
            file=sys.stderr,
        )
        return 2
    roles = {settings.staff_role} if args.staff else set()

    async def go() -> int:
        # A terminal redraws cheaply: the console streams at least five edits a second.
        app = await build_app(settings.model_copy(update={"edit_interval": min(settings.edit_interval, 0.2)}))
        try:
            return await run_console(
                app.conversations, discord_id=args.as_id, roles=roles, channel=args.channel
            )
        finally:
            await app.conversations.wait_idle()
            await app.store.close()

    return asyncio.run(go())


def _at_least_one(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {number}")
    return number


def _modes(value: str) -> tuple[str, ...]:
    return ("native", "json") if value == "both" else (value,)


def cmd_replay(args: argparse.Namespace) -> int:
    from bot.replay.format import TranscriptError
    from bot.replay.preflight import NothingToRun, check_cases, report_problem
    from bot.replay.runner import replay

    settings = _settings()
    _require_policies(settings)
    if args.live and not settings.llm_configured:
        print(
            "arca-bot: --live needs a configured LLM (ARCA_MODEL + OPENAI_API_KEY / OPENAI_BASE_URL)",
            file=sys.stderr,
        )
        return 2
    if args.report:
        problem = report_problem(Path(args.report))
        if problem:
            raise CommandError(f"--report {args.report}: {problem}; nothing ran")
    try:
        check_cases([Path(p) for p in args.paths], name_filter=args.k, live=args.live)
    except NothingToRun as exc:
        raise CommandError(str(exc)) from None
    except TranscriptError as exc:
        print(f"invalid transcript: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(
        replay(
            settings,
            [Path(p) for p in args.paths],
            modes=_modes(args.mode),
            live=args.live,
            trials=args.trials,
            report=Path(args.report) if args.report else None,
            name_filter=args.k,
        )
    )


def cmd_run(args: argparse.Namespace) -> int:
    from bot.serve import serve

    settings = _settings()
    _require_policies(settings)
    return asyncio.run(serve(settings, discord=True, web=settings.web_port is not None))


def cmd_web(args: argparse.Namespace) -> int:
    from bot.serve import serve

    settings = _settings()
    _require_policies(settings)
    return asyncio.run(serve(settings, discord=False, web=True, host=args.host, port=args.port))


def cmd_web_token(args: argparse.Namespace) -> int:
    from bot.channels.web.startup import web_token_command

    return web_token_command(load_settings(), args.player_id, args.ttl, link=args.link)


def cmd_console_link(args: argparse.Namespace) -> int:
    """Print a one-time staff console sign-in link (stored hashed; 5 minutes, single use)."""
    from bot.staff.console import console_base_url, mint_link
    from bot.store import Store

    settings = _settings()
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


def cmd_start(args: argparse.Namespace) -> int:
    """What `scripts/run` starts: Discord with a token, else the console with an LLM, else the demo."""
    settings = _settings()
    if settings.discord_token is not None and settings.discord_token.get_secret_value().strip():
        if not settings.llm_configured:
            print(
                "arca-bot: DISCORD_TOKEN is set but no LLM is configured (ARCA_MODEL + key/base URL)",
                file=sys.stderr,
            )
            return 2
        return cmd_run(args)
    if settings.llm_configured:
        args.as_id, args.staff, args.channel = "9001", False, "main"
        return cmd_chat(args)
    status = cmd_demo(argparse.Namespace(path=None))
    print(
        "hint: set ARCA_MODEL and OPENAI_API_KEY (or OPENAI_BASE_URL for Ollama/vLLM/llama.cpp) to chat for real, "
        "and DISCORD_TOKEN to join Discord."
    )
    return status


def cmd_demo(args: argparse.Namespace) -> int:
    from bot.demo import run_demo

    settings = _settings()
    _require_policies(settings)
    _quiet_logs_for_a_person(settings)
    return asyncio.run(run_demo(settings, Path(args.path) if args.path else None))


def cmd_stats(args: argparse.Namespace) -> int:
    import json

    from bot.analytics.staff_response import SlaTargets
    from bot.analytics.stats import compute_stats, format_stats
    from bot.store import Store

    settings = _settings()

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

    p = sub.add_parser("chat", help="talk to the bot in the terminal (the console channel)")
    p.add_argument(
        "--as", dest="as_id", default="9001", help="Discord user id to speak as (default 9001, 루나)"
    )
    p.add_argument("--staff", action="store_true", help="speak with the staff role")
    p.add_argument("--channel", default="main", help="channel name; the same name continues the conversation")
    p.set_defaults(fn=cmd_chat)

    p = sub.add_parser("replay", help="replay transcript cases (files or directories of *.yaml)")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--mode", choices=["native", "json", "both"], default="both")
    p.add_argument("--live", action="store_true", help="use the configured model instead of the scripts")
    p.add_argument(
        "--trials",
        type=_at_least_one,
        default=1,
        help="with --live: runs per case (1 or more), reports pass^k",
    )
    p.add_argument("--report", help="write a JSON report to this file")
    p.add_argument("-k", help="only cases whose name contains this text")
    p.set_defaults(fn=cmd_replay)

    p = sub.add_parser("run", help="start the Discord bot (needs DISCORD_TOKEN and an LLM)")
    p.set_defaults(fn=cmd_run)

    p = sub.add_parser(
        "start", help="Discord if DISCORD_TOKEN is set, else the console if an LLM is set, else the demo"
    )
    p.set_defaults(fn=cmd_start)

    p = sub.add_parser("web", help="serve the web channel (player chat page and SSE API) alone")
    p.add_argument("--host", help="address to bind (default ARCA_WEB_HOST, 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default ARCA_WEB_PORT, else 8080)")
    p.set_defaults(fn=cmd_web)

    p = sub.add_parser(
        "web-token", help="print a player token for the web channel (signed with ARCA_WEB_SECRET)"
    )
    p.add_argument("player_id", metavar="PLAYER_ID")
    p.add_argument("--ttl", default="15m", help="lifetime, e.g. 15m, 2h, 900 (default 15m)")
    p.add_argument("--link", action="store_true", help="print the chat page's address with the token")
    p.set_defaults(fn=cmd_web_token)

    p = sub.add_parser(
        "console-link", help="print a one-time sign-in link to the staff console (/staff, 5 minutes)"
    )
    p.add_argument("name", metavar="NAME", help="the staff member's name, written to the audit log")
    p.set_defaults(fn=cmd_console_link)

    p = sub.add_parser("stats", help="support analytics from the store (no LLM or Discord token needed)")
    p.add_argument("--days", type=_at_least_one, default=7, help="look back this many days (default 7)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(fn=cmd_stats)

    from bot.incidents.cli import add_incident_parser

    add_incident_parser(sub, _settings)

    p = sub.add_parser("demo", help="show the real pipeline with a scripted model (no LLM needed)")
    p.add_argument("path", nargs="?", help="demo transcripts (default: data/demo)")
    p.set_defaults(fn=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "fn", None):
        parser.print_help()
        return 2
    from bot.knowledge.documents import KnowledgeError
    from bot.store import StoreError
    from bot.store.seed import SeedError
    from tools.coupon_rules import CouponRulesError

    try:
        return int(args.fn(args) or 0)
    except ConfigError as exc:
        print(f"arca-bot: configuration error: {redact_urls(str(exc))}", file=sys.stderr)
        return 2
    except (CommandError, StoreError, SeedError, CouponRulesError, KnowledgeError) as exc:
        print(f"arca-bot: {redact_urls(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
