"""Commands that start or prepare the product: `run` (Discord, and the web channel when its port is
set), `web` (the web channel alone), `start` (whatever is configured), `web-token`, `doctor`, and the
policy index (`index`, `search`)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from bot.cli.conversing import cmd_chat, cmd_demo
from bot.cli.preflight import CommandError, checked_settings, require_policies
from bot.config import load_settings


def cmd_run(args: argparse.Namespace) -> int:
    from bot.serving.process import serve

    settings = checked_settings()
    require_policies(settings)
    return asyncio.run(serve(settings, discord=True, web=settings.web_port is not None))


def cmd_web(args: argparse.Namespace) -> int:
    from bot.serving.process import serve

    settings = checked_settings()
    require_policies(settings)
    return asyncio.run(serve(settings, discord=False, web=True, host=args.host, port=args.port))


def cmd_web_token(args: argparse.Namespace) -> int:
    from bot.serving.web.startup import web_token_command

    return web_token_command(load_settings(), args.player_id, args.ttl, link=args.link)


def cmd_start(args: argparse.Namespace) -> int:
    """What `scripts/run` starts: Discord with a token, else the console with an LLM, else the demo."""
    settings = checked_settings()
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


def cmd_doctor(args: argparse.Namespace) -> int:
    from bot.doctor import doctor_command

    return doctor_command()


def cmd_index(args: argparse.Namespace) -> int:
    from bot.knowledge.commands import index_command

    settings = checked_settings()
    return index_command(settings, Path(args.policies) if args.policies else None)


def cmd_questions(args: argparse.Namespace) -> int:
    """`arca-bot questions`: the model configured for `main` writes each section's questions."""
    from bot.knowledge.question_writer import LANGUAGES, questions_command
    from bot.llm.registry import ModelRegistry

    settings = checked_settings()
    for name in ("httpx", "httpx2"):  # one line per model call would bury the progress lines
        logging.getLogger(name).setLevel(logging.WARNING)
    directory = Path(args.policies) if args.policies else settings.policies_dir
    languages = [x.strip() for x in args.languages.split(",") if x.strip()]
    unknown = [x for x in languages if x not in LANGUAGES]
    if unknown or not languages:
        raise CommandError(f"--languages takes {', '.join(LANGUAGES)} (got {args.languages!r})")
    llm, model = None, ""
    if not args.check:
        registry = ModelRegistry.from_settings(settings)
        if not len(registry):
            raise CommandError("writing questions needs a model: set ARCA_MODEL (and OPENAI_BASE_URL)")
        name = registry.roles["main"]
        llm, model = registry.get(name), settings.model_configs()[name].model
    run = questions_command(
        llm, directory, model=model, languages=languages, force=args.force, check=args.check
    )
    return asyncio.run(run)


def cmd_search(args: argparse.Namespace) -> int:
    from bot.knowledge.query_terms import QueryTermsAside

    # Started before anything heavy is imported: Kiwi loads in a second process on the other core.
    with QueryTermsAside(args.query) as terms:
        from bot.knowledge.commands import search_command

        settings = checked_settings()
        return search_command(settings, args.query, args.top_k, args.json, terms=terms)
