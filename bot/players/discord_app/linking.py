"""Tells a player on Discord that the game linked their account (the `account.link` event of §11.3).

The event arrives at the web server, which may be another process than the Discord client, so the link
is written to the store and every Discord process polls for notices owed; a conditional update claims
each one, so it is sent once. It goes by DM: private (it names the game account) and possible long after
`/link`'s interaction token (15 minutes) is gone. When the member's DMs are closed, one line in the
channel where they asked, mentioning them and naming no account.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING

import discord

from bot.discord_kit.posting import NO_MENTIONS
from bot.game.linking import linked_public_text, linked_text
from bot.periodic import Periodic
from bot.store.link_codes import LinkNotice, claim_notice, pending_notices, release_notice
from bot.vocabulary import ThreadId

if TYPE_CHECKING:
    from bot.players.discord_app.host import SupportClient

log = logging.getLogger(__name__)

TELL_WITHIN = timedelta(hours=1)
"""A notice not sent within this (Discord away for that long) is dropped."""


class LinkNotifier:
    """Every `interval` seconds: the link notices nobody sent yet, each claimed, then sent."""

    def __init__(self, bot: SupportClient, *, interval: float = 1.0) -> None:
        self.bot = bot
        self.periodic = Periodic(
            self.send_pending,
            interval,
            name="link-notices",
            log=log,
            failure="could not send account link notices; the next round tries again",
        )

    def start(self) -> None:
        self.periodic.start()

    async def stop(self) -> None:
        await self.periodic.stop()

    async def send_pending(self) -> int:
        """Send what is owed; the number sent."""
        store = self.bot.conversations.store
        sent = 0
        for notice in await pending_notices(store, self.bot.conversations.clock() - TELL_WITHIN):
            if not await claim_notice(store, notice.code_id, self.bot.conversations.clock()):
                continue  # another process took it
            try:
                how = await self._tell(notice)
            except Exception:
                await release_notice(store, notice.code_id)
                raise
            await store.audit(
                actor="system",
                action="link.told",
                thread_id=notice.thread_id,
                target=notice.player_id,
                code="OK" if how != "none" else "NOT_TOLD",
                detail={"discord_id": notice.discord_id, "by": how},
            )
            sent += 1
        return sent

    async def _tell(self, notice: LinkNotice) -> str:
        try:
            dm = await self.bot.create_dm(discord.Object(id=int(notice.discord_id)))
            await dm.send(linked_text(notice.player_id), allowed_mentions=NO_MENTIONS)
            return "dm"
        except discord.NotFound:
            log.warning("Discord user %s of an account link is gone; not told", notice.discord_id)
            return "none"  # not retried: it would fail every round
        except discord.Forbidden:
            pass  # the member does not take DMs from this server: say it where they asked
        where = ThreadId(notice.thread_id)
        if where.kind != "discord" or where.snowflake is None:
            log.warning("could not tell Discord user %s of their account link", notice.discord_id)
            return "none"
        only_them = discord.AllowedMentions(
            everyone=False, roles=False, users=[discord.Object(id=int(notice.discord_id))]
        )
        try:
            channel = self.bot.get_channel(where.snowflake) or await self.bot.fetch_channel(where.snowflake)
            if not isinstance(channel, discord.abc.Messageable):
                return "none"
            await channel.send(linked_public_text(notice.discord_id), allowed_mentions=only_them)
        except (discord.NotFound, discord.Forbidden):  # the channel is gone or closed to the bot
            log.warning("could not tell Discord user %s of their account link", notice.discord_id)
            return "none"
        return "channel"
