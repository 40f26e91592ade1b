"""`arca-bot simulate SCENARIO… [--trials K] [--report FILE] [--save-transcripts DIR] [--parallel N]
[--scripted]`: simulated players against the configured bot model, graded by the database."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from bot.cli.preflight import CommandError, checked_settings, require_policies


def cmd_simulate(args: argparse.Namespace) -> int:
    from bot.llm.openai_llm import OpenAILLM
    from bot.llm.registry import ModelRegistry, openai_factory
    from bot.replay.preflight import report_problem
    from bot.simulate.command import simulate
    from bot.simulate.scenario import ScenarioError, collect_scenarios

    settings = checked_settings()
    require_policies(settings)
    try:
        scenarios = collect_scenarios([Path(p) for p in args.paths])
    except ScenarioError as exc:
        print(f"invalid scenario: {exc}", file=sys.stderr)
        return 2
    if not settings.llm_configured:
        raise CommandError(
            "simulate needs a model for the bot: set ARCA_MODEL and OPENAI_BASE_URL / OPENAI_API_KEY"
        )
    use_model = bool(settings.sim_model) and not args.scripted
    if not use_model:
        unscripted = [s.path for s in scenarios if not s.player.turns and not s.player.opening]
        if unscripted:
            raise CommandError(
                f"{unscripted[0]}: no `player.turns` for a scripted player; set ARCA_SIM_MODEL to let a "
                "model play it"
            )
    if args.report:
        problem = report_problem(Path(args.report))
        if problem:
            raise CommandError(f"--report {args.report}: {problem}; nothing ran")
    player_model = None
    if use_model:
        key = settings.sim_api_key or settings.openai_api_key
        player_model = OpenAILLM(
            settings.sim_model or "",
            base_url=settings.sim_base_url or settings.openai_base_url,
            api_key=key.get_secret_value() if key else None,
            timeout=settings.llm_timeout,
            max_retries=settings.llm_max_retries,
        )

    def bot_model():  # a fresh client per run: its token count is the run's
        return ModelRegistry.from_settings(settings, factory=openai_factory).for_role("main")

    return asyncio.run(
        simulate(
            settings,
            scenarios,
            bot_model_factory=bot_model,
            player_model=player_model,
            trials=args.trials,
            parallel=args.parallel or settings.sim_parallel,
            report=Path(args.report) if args.report else None,
            save_transcripts=Path(args.save_transcripts) if args.save_transcripts else None,
        )
    )
