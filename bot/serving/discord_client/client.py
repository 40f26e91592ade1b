"""The one Discord client: `ArcaDiscordBot` hands gateway messages to the players' side
(`bot.players.discord_app.messages`), loads the staff cog, gives the staff channel its posts
(`bot.staffroom.discord_staff`), and registers both rooms' persistent buttons; `bot.serving.process`
starts it with `bot.serving.discord_client.launch`. It only assembles: which messages are answered, and
how, is decided in the rooms and by `Conversations`.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from bot.analytics.staff_response import SlaTargets
from bot.desk.sla import SlaWatch
from bot.discord_kit.posting import NO_MENTIONS
from bot.players.discord_app.feedback import FeedbackButton, tell_closed
from bot.players.discord_app.linking import LinkNotifier
from bot.players.discord_app.messages import PlayerMessages
from bot.players.discord_app.notices import NoticePoster
from bot.players.discord_app.outbox import discord_outbox
from bot.players.discord_app.person import PersonButton
from bot.staffroom.discord_staff.buttons import ApprovalButton, HandoffButton
from bot.staffroom.discord_staff.channel import StaffChannel
from bot.staffroom.discord_staff.cog import ArcaCommandTree, install_staff_commands
from bot.staffroom.discord_staff.incidents import IncidentButton

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


class ArcaDiscordBot(commands.Bot):
    """The Discord client: one login carrying both rooms' Discord parts, started and stopped together."""

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
        self.shutdown_grace = shutdown_grace
        self.staff_commands = staff_commands
        self.shard_plan = shard_plan
        """Which guilds this process answers when the bot runs as several processes (None: all)."""
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
        self.staff_channel = StaffChannel(self, settings)
        """Posts escalations, approval requests and reminders into `ARCA_STAFF_CHANNEL`."""
        self.player_messages = PlayerMessages(self, feedback_buttons=feedback_buttons)
        """Players' messages: which are addressed to the bot, each answered in its own task."""
        self.tickets = self.player_messages.tickets  # a private thread per player in ARCA_TICKET_CHANNELS

    # ---- lifecycle --------------------------------------------------------------------------

    async def setup_hook(self) -> None:
        # Runs once per login (not on reconnects): the right place to sync slash commands.
        if self.staff_commands and self.conversations.staff is not None:
            await install_staff_commands(self, self.conversations, self.settings.guild_ids)
        if self.staff_channel.post not in self.conversations.staff_sinks:
            self.conversations.staff_sinks.append(self.staff_channel.post)
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
            sorted(self.player_messages.support_channels) or "none (mention the bot)",
            "on" if self.settings.allow_dms else "off",
        )

    async def close(self) -> None:
        await self.outbox.stop()
        await self.sla_watch.stop()
        await self.incident_notices.stop()
        await self.link_notices.stop()
        await self.tickets.stop()
        await self.player_messages.finish(self.shutdown_grace)
        with contextlib.suppress(ValueError):
            self.conversations.staff_sinks.remove(self.staff_channel.post)
        await super().close()

    # ---- messages ---------------------------------------------------------------------------

    async def on_message(self, message: discord.Message) -> None:
        await self.player_messages.on_message(message)  # only players write to the bot in a message

    async def wait_idle(self) -> None:
        """Wait until no message task is in flight (tests, shutdown)."""
        await self.player_messages.wait_idle()
        await self.conversations.wait_idle()


__all__ = ["ArcaDiscordBot", "register_components"]
