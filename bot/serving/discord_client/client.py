"""The one Discord client: `ArcaDiscordBot` turns gateway messages into `Conversations.handle` calls and
shows replies through `DiscordSurface` (`bot.players.discord_app.surface`), loads the staff cog and posts
to the staff channel (`bot.staffroom.discord_staff`), and registers both rooms' persistent buttons;
`bot.serving.process` starts it with `bot.serving.discord_client.launch`. Every decision about a message (guards, commands, runs, interrupts)
is made by `Conversations`; this module only decides which messages are addressed to the bot.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from bot.analytics.staff_response import SlaTargets
from bot.attachments import Upload
from bot.conversations import Incoming
from bot.conversations.renderer import DISCORD_LIMIT, split_message
from bot.desk.sla import SlaWatch
from bot.discord_kit.members import role_names
from bot.players.discord_app.feedback import FeedbackButton, attach_feedback, tell_closed
from bot.players.discord_app.linking import LinkNotifier
from bot.players.discord_app.notices import NoticePoster
from bot.players.discord_app.outbox import discord_outbox
from bot.players.discord_app.person import PersonButton
from bot.players.discord_app.surface import NO_MENTIONS, DiscordSurface
from bot.players.discord_app.tickets import TicketDesk
from bot.staffroom.discord_staff.buttons import ApprovalButton, HandoffButton, staff_notice_view
from bot.staffroom.discord_staff.cog import ArcaCommandTree, format_staff_notice, install_staff_commands
from bot.staffroom.discord_staff.incidents import IncidentButton
from bot.vocabulary import ThreadId

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.conversations import Conversations
    from bot.sharding import ShardPlan

log = logging.getLogger(__name__)

DYNAMIC_ITEMS = (ApprovalButton, HandoffButton, IncidentButton, FeedbackButton, PersonButton)
"""Every persistent button of both rooms: the staff's cards, the players' votes and "Talk to a person"."""


def register_components(client: discord.Client) -> None:
    """Make every persistent button answer presses, including on messages sent before a restart."""
    client.add_dynamic_items(*DYNAMIC_ITEMS)


def bot_intents() -> discord.Intents:
    """Guilds, guild messages, DMs and message content; no privileged member or presence intents."""
    intents = discord.Intents.none()
    intents.guilds = True
    intents.guild_messages = True
    intents.dm_messages = True
    intents.message_content = True
    return intents


def thread_id_of_message(message: discord.Message) -> str:
    """`discord:<channel_id>` (a Discord thread is a channel too), `dm:<user_id>` in a DM."""
    if message.guild is None:
        return ThreadId.dm(message.author.id)
    return ThreadId.discord(message.channel.id)


class ArcaDiscordBot(commands.Bot):
    """The Discord client. Each addressed message is handled in its own task; the gateway never waits."""

    def __init__(
        self,
        conversations: Conversations,
        settings: Settings,
        *,
        shutdown_grace: float = 10.0,
        staff_commands: bool = True,
        shard_plan: ShardPlan | None = None,
        feedback_buttons: bool = True,
        outbox_interval: float = 1.0,
        desk_watch: bool = True,
        **options: Any,
    ) -> None:
        options.setdefault("allowed_mentions", NO_MENTIONS)
        options.setdefault("tree_cls", ArcaCommandTree)
        super().__init__(
            command_prefix=commands.when_mentioned, help_command=None, intents=bot_intents(), **options
        )
        self.conversations = conversations
        self.settings = settings
        self.support_channels = frozenset(settings.support_channels) | frozenset(settings.ticket_channels)
        self.shutdown_grace = shutdown_grace
        self.staff_commands = staff_commands
        self.shard_plan = shard_plan
        """Which guilds this process answers when the bot runs as several processes (None: all)."""
        self.feedback_buttons = feedback_buttons
        self._tasks: dict[asyncio.Task[Any], str] = {}
        """In-flight message tasks → their thread id."""
        self.outbox = discord_outbox(self, interval=outbox_interval)
        """Posts the staff console's replies into this process's channels."""
        self.incident_notices = NoticePoster.for_client(self, interval=outbox_interval)
        """Posts open incidents' notices into the opted-in channels, and edits them on update."""
        self.link_notices = LinkNotifier(self, interval=outbox_interval)
        """Tells members whose `/link` code the game redeemed (`bot.players.discord_app.linking`)."""
        self.sla_watch = SlaWatch(
            conversations.store,
            conversations.notify_staff,
            SlaTargets.from_settings(settings),
            conversations.clock,
            tell=lambda thread_id, text: tell_closed(self, thread_id, text),
            close_after=timedelta(hours=settings.escalation_idle_close_hours),
        )
        """Reminds the staff channel of escalations about to miss their targets (`bot.desk.sla`)."""
        self.desk_watch = desk_watch
        """False when the serving process runs the one desk watch for all its channels (`bot.serving.process`)."""
        self.tickets = TicketDesk(self)  # a private thread per player in ARCA_TICKET_CHANNELS

    # ---- lifecycle --------------------------------------------------------------------------

    async def setup_hook(self) -> None:
        # Runs once per login (not on reconnects): the right place to sync slash commands.
        if self.staff_commands and self.conversations.staff is not None:
            await install_staff_commands(self, self.conversations, self.settings.guild_ids)
        if self.post_to_staff not in self.conversations.staff_sinks:
            self.conversations.staff_sinks.append(self.post_to_staff)
        register_components(self)  # persistent buttons, also on messages from before a restart
        self.outbox.start()
        if self.desk_watch:
            self.sla_watch.start()
        self.incident_notices.start()
        self.link_notices.start()
        await self.tickets.start()

    async def on_ready(self) -> None:
        log.info(
            "Discord: logged in as %s (%s); support channels %s; DMs %s",
            self.user,
            self.user.id if self.user else "?",
            sorted(self.support_channels) or "none (mention the bot)",
            "on" if self.settings.allow_dms else "off",
        )

    async def close(self) -> None:
        await self.outbox.stop()
        await self.sla_watch.stop()
        await self.incident_notices.stop()
        await self.link_notices.stop()
        await self.tickets.stop()
        pending = [t for t in self._tasks if not t.done()]
        if pending:
            # Let answers in progress finish, then stop what is left (its history stays valid).
            _, still = await asyncio.wait(pending, timeout=self.shutdown_grace)
            for task in still:
                await self.conversations.stop(self._tasks.get(task, ""))
            if still:
                await asyncio.wait(still, timeout=2.0)
            for task in still:
                task.cancel()
        with contextlib.suppress(ValueError):
            self.conversations.staff_sinks.remove(self.post_to_staff)
        await super().close()

    # ---- messages ---------------------------------------------------------------------------

    def addressed_text(self, message: discord.Message) -> str | None:
        """The text meant for the bot, or None when the bot should stay silent.

        Support channels (and their threads) are answered without a mention; elsewhere only a
        message that mentions the bot; DMs only when `ARCA_ALLOW_DMS` is on. Bots, webhooks and
        system messages are ignored.
        """
        if message.author.bot or message.webhook_id is not None:
            return None
        if self.user is not None and message.author.id == self.user.id:
            return None
        if message.type not in (discord.MessageType.default, discord.MessageType.reply):
            return None
        content = message.content or ""
        me = self.user
        mentioned = me is not None and any(u.id == me.id for u in message.mentions)
        if me is not None:
            content = re.sub(rf"<@!?{me.id}>", " ", content)
        content = content.strip()
        if message.guild is None:
            return content if self.settings.allow_dms else None
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
        plan = self.shard_plan
        if plan is not None and not plan.owns_message(message.guild.id if message.guild else None):
            return  # another process owns this guild: its conversations live there
        text = self.addressed_text(message)
        if text is None:
            return
        thread_id = thread_id_of_message(message)
        ticket = self.tickets.route(message, text) if self.tickets.takes(message) else None
        task = asyncio.create_task(ticket or self.handle_message(message, text, thread_id))
        self._tasks[task] = thread_id
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self._tasks.pop(task, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("handling a Discord message failed", exc_info=task.exception())

    async def handle_message(
        self, message: discord.Message, text: str, thread_id: str, *, channel: Any = None
    ) -> None:  # `channel`: where to answer when not where it was written (a ticket's thread)
        author = message.author
        actor = await self.conversations.resolve_actor(
            str(author.id), role_names(author), author.display_name
        )
        surface = DiscordSurface(channel or message.channel, author=author)
        since = self.conversations.clock()
        try:
            files = [Upload(a.filename, a.size, a.read) for a in message.attachments]  # read only if small
            incoming = Incoming(thread_id, actor, text, ref=message, attachments=list(files))
            outcome = await self.conversations.handle(incoming, surface)
        finally:
            surface.stop_typing()
        if outcome.kind == "answered" and self.feedback_buttons:
            await asyncio.sleep(
                self.conversations.edit_interval
            )  # the renderer's pace holds for this edit too
            await attach_feedback(self, surface, thread_id, actor, since)

    # ---- staff channel ----------------------------------------------------------------------

    async def post_to_staff(self, kind: str, payload: dict[str, Any]) -> None:
        """Staff sink: escalations and approval requests go to `ARCA_STAFF_CHANNEL`."""
        channel_id = self.settings.staff_channel
        if channel_id is None:
            log.warning("%s not posted: ARCA_STAFF_CHANNEL is not set", kind)
            return
        if kind == "handoff" and payload.get("on_card"):
            return  # Take over was pressed on a card: that card is edited instead
        channel = self.get_channel(channel_id) or await self.fetch_channel(channel_id)
        if not isinstance(channel, discord.abc.Messageable):
            log.error("ARCA_STAFF_CHANNEL %s is not a text channel", channel_id)
            return
        chunks = split_message(format_staff_notice(kind, payload), DISCORD_LIMIT)
        for i, chunk in enumerate(chunks):
            view = staff_notice_view(kind, payload) if i == len(chunks) - 1 else None
            await channel.send(chunk, allowed_mentions=NO_MENTIONS, **({"view": view} if view else {}))

    async def wait_idle(self) -> None:
        """Wait until no message task is in flight (tests, shutdown)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))
        await self.conversations.wait_idle()


__all__ = ["ArcaDiscordBot", "DiscordSurface", "register_components"]
