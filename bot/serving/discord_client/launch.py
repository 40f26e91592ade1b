"""Starting the Discord client: the token and shard plan read from the settings first (`discord_launch`),
then `run_client`, which logs in and turns a rejected token, a refused intent or an unreachable Discord
into one line on stderr and an exit status instead of a traceback."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiohttp
import discord

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.serving.discord_client.client import ArcaDiscordBot
    from bot.sharding import ShardPlan

NO_TOKEN_LINE = (
    "arca-bot: DISCORD_TOKEN is not set — create a bot in the Discord Developer Portal and put its token "
    "in DISCORD_TOKEN (docs/deploy/discord.md)."
)
BAD_TOKEN_LINE = (
    "arca-bot: Discord rejected DISCORD_TOKEN (login failed) — copy the bot token again from the Developer "
    "Portal (Bot → Reset Token)."
)
NO_INTENT_LINE = (
    "arca-bot: Discord refused the Message Content intent — enable it in the Developer Portal "
    "(Bot → Privileged Gateway Intents → Message Content Intent)."
)


@dataclass(frozen=True)
class DiscordLaunch:
    """What starting the client needs, read from the settings before anything else starts."""

    token: str
    plan: ShardPlan
    client_options: dict[str, Any]
    """The shard options of this process (`ShardPlan.client_options`)."""


def discord_launch(settings: Settings) -> DiscordLaunch | str:
    """The client's token and shard plan, or the one line that says why Discord cannot start."""
    token = settings.discord_token.get_secret_value().strip() if settings.discord_token else ""
    if not token:
        return NO_TOKEN_LINE
    from bot.sharding import ShardingError, ShardPlan

    try:
        plan = ShardPlan.from_settings(settings)
        return DiscordLaunch(token, plan, plan.client_options())
    except ShardingError as exc:
        return f"arca-bot: {exc}"


async def run_client(bot: ArcaDiscordBot, token: str) -> int:
    """Log in and run until the client is closed. The exit status: 0 when closed; 2 for a rejected token
    or a refused intent, 1 when Discord cannot be reached (one line on stderr each, not a traceback)."""
    try:
        await bot.start(token)
        return 0
    except discord.LoginFailure:
        print(BAD_TOKEN_LINE, file=sys.stderr)
        return 2
    except discord.PrivilegedIntentsRequired:
        print(NO_INTENT_LINE, file=sys.stderr)
        return 2
    except (aiohttp.ClientConnectionError, discord.GatewayNotFound) as exc:
        print(f"arca-bot: cannot reach Discord ({type(exc).__name__}: {exc}).", file=sys.stderr)
        return 1
