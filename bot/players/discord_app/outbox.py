"""Posts staff replies from the console's outbox into the Discord channels this process answers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from bot.store.outbox import OutboxPoller, OutboxReply
from bot.vocabulary import ThreadId

if TYPE_CHECKING:
    from bot.players.discord_app.host import SupportClient

PREFIX = "discord:"
"""The threads whose replies this process claims."""


def staff_message(reply: OutboxReply) -> str:
    """The player sees who answers: the staff member's name, Korean label first."""
    return f"**상담원 · Staff {reply.staff}**\n{reply.text}"


def _channel_of(bot: SupportClient, thread_id: str) -> discord.abc.Messageable | None:
    tid = ThreadId(thread_id)
    if tid.kind != "discord" or tid.snowflake is None:
        return None
    channel = bot.get_channel(tid.snowflake)
    if not isinstance(channel, discord.abc.GuildChannel | discord.Thread):
        return None  # not a channel of a server (a DM's thread id has another kind)
    if bot.shard_plan is not None and not bot.shard_plan.owns_message(channel.guild.id):
        return None  # another process's shard posts it
    return channel  # type: ignore[return-value]


def discord_outbox(bot: SupportClient, *, interval: float = 1.0) -> OutboxPoller:
    async def deliver(reply: OutboxReply) -> None:
        channel = _channel_of(bot, reply.thread_id)
        if channel is None:
            raise LookupError(f"channel of {reply.thread_id} is gone")
        await channel.send(staff_message(reply))

    return OutboxPoller(
        bot.conversations.store,
        PREFIX,
        deliver,
        owns=lambda thread_id: _channel_of(bot, thread_id) is not None,
        interval=interval,
    )
