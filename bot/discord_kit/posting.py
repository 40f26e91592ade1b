"""Telling a player's conversation something from outside a run (a staff decision, an auto-close):
posted into its Discord channel or DM and kept in its memory as a notice."""

from __future__ import annotations

import logging
from typing import Any

import discord

from bot.vocabulary import ThreadId

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
"""What every message the bot posts may ping: no one (a player's or a model's text never mentions @everyone)."""


async def tell_thread(
    client: Any, thread_id: str | None, text: str, view: discord.ui.View | None = None
) -> bool:
    """Post `text` into the player's conversation (a Discord channel or DM) and keep it in its memory."""
    if not thread_id:
        return False
    extra: dict[str, Any] = {} if view is None else {"view": view}
    conv = client.conversations
    tid = ThreadId(thread_id)
    ident = tid.snowflake
    try:
        if tid.kind == "discord" and ident is not None:
            channel = client.get_channel(ident) or await client.fetch_channel(ident)
            await channel.send(text, allowed_mentions=NO_MENTIONS, **extra)
        elif tid.kind == "dm" and ident is not None:
            user = client.get_user(ident) or await client.fetch_user(ident)
            await user.send(text, allowed_mentions=NO_MENTIONS, **extra)
    except discord.HTTPException:
        log.exception("could not tell %s the outcome", thread_id)
    await conv.memory.append(thread_id, {"role": "assistant", "content": text}, kind="notice")
    return True
