"""Players' messages on Discord: which gateway messages are addressed to the bot, one task per message (a
ticket's route or the thread's run through `Conversations.handle`, shown by `DiscordSurface`), and the
👍 / 👎 under an answer. The one client (`bot.serving.discord_client`) hands it every message; every
decision about a message (guards, commands, runs, interrupts) is made by `Conversations`.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import TYPE_CHECKING, Any

import discord

from bot.attachments import Upload
from bot.conversations import Incoming
from bot.discord_kit.members import role_names
from bot.players.discord_app.feedback import attach_feedback
from bot.players.discord_app.surface import DiscordSurface
from bot.players.discord_app.tickets import TicketDesk
from bot.vocabulary import ThreadId

if TYPE_CHECKING:
    from bot.players.discord_app.host import SupportClient

log = logging.getLogger(__name__)


def thread_id_of_message(message: discord.Message) -> str:
    """`discord:<channel_id>` (a Discord thread is a channel too), `dm:<user_id>` in a DM."""
    if message.guild is None:
        return ThreadId.dm(message.author.id)
    return ThreadId.discord(message.channel.id)


class PlayerMessages:
    """The players' side of the client's `on_message`. Each addressed message is handled in its own task;
    the gateway never waits."""

    def __init__(self, client: SupportClient, *, feedback_buttons: bool = True) -> None:
        self.client = client
        self.tickets = TicketDesk(client, self.handle)
        """A private thread per player in `ARCA_TICKET_CHANNELS` (`bot.players.discord_app.tickets`)."""
        self.feedback_buttons = feedback_buttons
        settings = client.settings
        self.support_channels = frozenset(settings.support_channels) | frozenset(settings.ticket_channels)
        self._tasks: dict[asyncio.Task[Any], str] = {}
        """In-flight message tasks → their thread id."""

    def addressed_text(self, message: discord.Message) -> str | None:
        """The text meant for the bot, or None when the bot should stay silent.

        Support channels (and their threads) are answered without a mention; elsewhere only a
        message that mentions the bot; DMs only when `ARCA_ALLOW_DMS` is on. Bots, webhooks and
        system messages are ignored.
        """
        me = self.client.user
        if message.author.bot or message.webhook_id is not None:
            return None
        if me is not None and message.author.id == me.id:
            return None
        if message.type not in (discord.MessageType.default, discord.MessageType.reply):
            return None
        content = message.content or ""
        mentioned = me is not None and any(u.id == me.id for u in message.mentions)
        if me is not None:
            content = re.sub(rf"<@!?{me.id}>", " ", content)
        content = content.strip()
        if message.guild is None:
            return content if self.client.settings.allow_dms else None
        channel = message.channel
        in_support = (
            channel.id in self.support_channels
            or (isinstance(channel, discord.Thread) and channel.parent_id in self.support_channels)
            or channel.id in self.tickets.threads
        )
        if in_support or mentioned:
            return content
        return None

    async def on_message(self, message: discord.Message) -> None:
        plan = self.client.shard_plan
        if plan is not None and not plan.owns_message(message.guild.id if message.guild else None):
            return  # another process owns this guild: its conversations live there
        text = self.addressed_text(message)
        if text is None:
            return
        thread_id = thread_id_of_message(message)
        ticket = self.tickets.route(message, text) if self.tickets.takes(message) else None
        task = asyncio.create_task(ticket or self.handle(message, text, thread_id))
        self._tasks[task] = thread_id
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self._tasks.pop(task, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("handling a Discord message failed", exc_info=task.exception())

    async def handle(
        self, message: discord.Message, text: str, thread_id: str, *, channel: Any = None
    ) -> None:  # `channel`: where to answer when not where it was written (a ticket's thread)
        conversations = self.client.conversations
        author = message.author
        actor = await conversations.resolve_actor(str(author.id), role_names(author), author.display_name)
        surface = DiscordSurface(channel or message.channel, author=author)
        since = conversations.clock()
        try:
            files = [Upload(a.filename, a.size, a.read) for a in message.attachments]  # read only if small
            incoming = Incoming(thread_id, actor, text, ref=message, attachments=list(files))
            outcome = await conversations.handle(incoming, surface)
        finally:
            surface.stop_typing()
        if outcome.kind == "answered" and self.feedback_buttons:
            await asyncio.sleep(conversations.edit_interval)  # the renderer's pace holds for this edit too
            await attach_feedback(self.client, surface, thread_id, actor, since)

    async def finish(self, grace: float) -> None:
        """Let answers in progress finish for `grace` seconds, then stop what is left (its history stays
        valid)."""
        pending = [t for t in self._tasks if not t.done()]
        if not pending:
            return
        _, still = await asyncio.wait(pending, timeout=grace)
        for task in still:
            await self.client.conversations.stop(self._tasks.get(task, ""))
        if still:
            await asyncio.wait(still, timeout=2.0)
        for task in still:
            task.cancel()

    async def wait_idle(self) -> None:
        """Wait until no message task is in flight (tests, shutdown)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))
