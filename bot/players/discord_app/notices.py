"""Open incidents' notices posted in the support channels that opted in (`ARCA_INCIDENT_NOTICE_CHANNELS`):
once per incident and channel (claimed in the store, so a restart or a second process never posts it
again), and the same message edited when staff update the notice or close the incident."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC
from typing import Any

import discord

from bot.discord_kit.posting import NO_MENTIONS
from bot.periodic import Periodic
from bot.store import Store
from bot.store.incidents import IncidentRecord

log = logging.getLogger(__name__)


def revision(incident: IncidentRecord) -> str:
    return f"{incident.notice_version}:{incident.status}"


def notice_message(incident: IncidentRecord) -> str:
    """The channel post: Korean first, English after, and whether it is still going on."""
    if incident.status == "closed":
        head = f"✅ **[해결됨 / Resolved] {incident.title}**"
    else:
        head = f"📢 **[장애 공지 / Incident notice] {incident.title}**"
    lines = [head, incident.notice_ko]
    if incident.notice_en:
        lines.append(incident.notice_en)
    # Discord's timestamp markup: each player sees the time in their own zone and language.
    updated = discord.utils.format_dt(
        incident.updated_at.replace(tzinfo=incident.updated_at.tzinfo or UTC), "f"
    )
    lines.append(f"-# #{incident.id} · v{incident.notice_version} · {updated}")
    return "\n".join(lines)[:2000]


class NoticePoster:
    """Keeps each opted-in channel's post of every open incident current (a poll every `interval` s)."""

    def __init__(self, client: Any, store: Store, channels: Sequence[int], *, interval: float = 1.0) -> None:
        self.client, self.store, self.channels, self.interval = client, store, list(channels), interval
        self._periodic = Periodic(
            self.sync_once,
            interval,
            name="incident-notices",
            log=log,
            failure="incident notices: a round failed",
        )

    @classmethod
    def for_client(cls, client: Any, *, interval: float = 1.0) -> NoticePoster:
        """The poster of a Discord client with `conversations` and `settings` (`bot.players.discord_app.host.SupportClient`)."""
        return cls(
            client, client.conversations.store, client.settings.incident_notice_channels, interval=interval
        )

    async def sync_once(self) -> int:
        """Post or edit what is due; returns how many posts were sent or edited."""
        if not self.channels:
            return 0
        posted = await self.store.incidents.posts.incident_ids()
        changed = 0
        for incident in await self.store.incidents.list():
            if incident.status != "open" and incident.id not in posted:
                continue
            for channel_id in self.channels:
                changed += await self._sync(incident, str(channel_id))
        return changed

    async def _sync(self, incident: IncidentRecord, channel_id: str) -> int:
        posts, rev = self.store.incidents.posts, revision(incident)
        post = await posts.of(incident.id, channel_id)
        if post is None:
            if incident.status != "open":
                return 0
            post = await posts.claim_new(incident.id, channel_id, rev)
            if post is None:
                return 0
        elif post.revision == rev and post.message_id is not None:
            return 0
        elif not await posts.claim_change(post, rev):
            return 0
        channel = self.client.get_channel(int(channel_id)) or await self.client.fetch_channel(int(channel_id))
        text = notice_message(incident)
        if post.message_id is not None:
            await channel.get_partial_message(int(post.message_id)).edit(
                content=text, allowed_mentions=NO_MENTIONS
            )
            return 1
        sent = await channel.send(text, allowed_mentions=NO_MENTIONS)
        await posts.posted(post.id, str(sent.id))
        return 1

    def start(self) -> None:
        if self.channels:
            self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()
