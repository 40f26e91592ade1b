"""The `arca-bot` command line in one place: every subcommand, its arguments and the function it runs
(DESIGN.md §9 fixes the names, flags and exit codes)."""

from __future__ import annotations

import argparse

from bot import __version__
from bot.cli.conversing import cmd_chat, cmd_demo, cmd_replay
from bot.cli.guards import cmd_guards
from bot.cli.preflight import CommandError, checked_settings
from bot.cli.records import cmd_console_link, cmd_seed, cmd_stats
from bot.cli.serving import (
    cmd_doctor,
    cmd_index,
    cmd_questions,
    cmd_run,
    cmd_search,
    cmd_start,
    cmd_web,
    cmd_web_token,
)
from bot.cli.simulating import cmd_simulate


def _at_least_one(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {number}")
    return number


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

    p = sub.add_parser(
        "questions", help="write, with the configured model, the questions each policy section answers"
    )
    p.add_argument("--policies", help="policy directory (default: policies/)")
    p.add_argument("--languages", default="en,ko", help="comma-separated: en, ko (default en,ko)")
    p.add_argument("--force", action="store_true", help="write every section again, not only stale ones")
    p.add_argument(
        "--check", action="store_true", help="list sections without current questions; exit 1 if any"
    )
    p.set_defaults(fn=cmd_questions)

    p = sub.add_parser("search", help="search the policy index")
    p.add_argument("query")
    p.add_argument("--top-k", type=int, default=3, dest="top_k")
    p.add_argument("--json", action="store_true", help="print one JSON array on stdout")
    p.set_defaults(fn=cmd_search, short_lived=True)

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

    p = sub.add_parser(
        "simulate", help="simulated players against the configured model, graded by the database"
    )
    p.add_argument("paths", nargs="+", metavar="SCENARIO", help="scenario files or directories of *.yaml")
    p.add_argument("--trials", type=_at_least_one, default=1, help="runs per scenario (reports pass^k)")
    p.add_argument("--report", help="write a JSON report to this file")
    p.add_argument("--save-transcripts", metavar="DIR", help="save each run as a replay transcript here")
    p.add_argument("--parallel", type=_at_least_one, help="runs at once (default ARCA_SIM_PARALLEL, 2)")
    p.add_argument(
        "--scripted", action="store_true", help="use the scenarios' scripted players even with ARCA_SIM_MODEL"
    )
    p.set_defaults(fn=cmd_simulate)

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

    from bot.game.orders.cli import add_orders_parser
    from bot.incidents.cli import add_incident_parser

    add_incident_parser(sub, checked_settings)
    add_orders_parser(sub, checked_settings, CommandError)

    from bot.cli.deliveries import add_deliveries_parser

    add_deliveries_parser(sub)

    p = sub.add_parser(
        "guards", help="list the guard pipeline (call checks, sentence rules) for the configured model"
    )
    p.add_argument("--json", action="store_true", help="print the rules as a JSON array")
    p.set_defaults(fn=cmd_guards)

    p = sub.add_parser("demo", help="show the real pipeline with a scripted model (no LLM needed)")
    p.add_argument("path", nargs="?", help="demo transcripts (default: data/demo)")
    p.set_defaults(fn=cmd_demo)
    return parser
