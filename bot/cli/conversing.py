"""Commands that hold conversations without a channel server: `chat` (the console channel), `demo` (the
real pipeline with a scripted model) and `replay` (transcript cases, scripted or `--live`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import timedelta
from pathlib import Path

from bot.cli.preflight import CommandError, checked_settings, quiet_logs_for_a_person, require_policies


def cmd_chat(args: argparse.Namespace) -> int:
    from bot.app import build_app
    from bot.players.terminal import run_console
    from bot.serving.process import desk_watch, game_deliveries

    settings = checked_settings()
    require_policies(settings)
    quiet_logs_for_a_person(settings)
    if not settings.llm_configured:
        print(
            "arca-bot: no LLM configured. Set ARCA_MODEL and OPENAI_API_KEY or OPENAI_BASE_URL "
            "(see docs/getting-started.md), or run `arca-bot demo` to see the scripted pipeline.",
            file=sys.stderr,
        )
        return 2
    roles = {settings.staff_role} if args.staff else set()

    async def go() -> int:
        # A terminal redraws cheaply: the console streams at least five edits a second.
        app = await build_app(settings.model_copy(update={"edit_interval": min(settings.edit_interval, 0.2)}))
        # SLA reminders print here as staff notices too; with no Discord bot configured none is waited for.
        # The console closes no conversation: it posts into none but its own.
        away = None if settings.discord_token else timedelta(0)
        desk = desk_watch(settings, app, bot=None, web=False, wait=away)
        desk.start()
        deliveries = game_deliveries(settings, app)  # the console is a long-running process too
        try:
            return await run_console(
                app.conversations, discord_id=args.as_id, roles=roles, channel=args.channel
            )
        finally:
            await desk.stop()
            if deliveries is not None:
                await deliveries.stop()
            await app.conversations.wait_idle()
            if app.conversations.services.orders is not None:
                await app.conversations.services.orders.close()  # the game backend's HTTP client
            await app.store.close()

    return asyncio.run(go())


def cmd_demo(args: argparse.Namespace) -> int:
    from bot.demo import run_demo

    settings = checked_settings()
    require_policies(settings)
    quiet_logs_for_a_person(settings)
    return asyncio.run(run_demo(settings, Path(args.path) if args.path else None))


def _modes(value: str) -> tuple[str, ...]:
    return ("native", "json") if value == "both" else (value,)


def cmd_replay(args: argparse.Namespace) -> int:
    from bot.replay.command import replay
    from bot.replay.format import TranscriptError
    from bot.replay.preflight import NothingToRun, check_cases, report_problem

    settings = checked_settings()
    require_policies(settings)
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
