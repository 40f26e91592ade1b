"""Ticket threads (issue 26): in a channel listed in `ARCA_TICKET_CHANNELS`, a player's first message opens
a private thread only they, the bot and staff can read (in a forum, the player's own post becomes the
ticket); the bot answers there, brings staff in on escalation and takeover, and archives and locks the
thread when the conversation closes. A player who writes in the channel again while their ticket is open
is pointed to it. Which thread is whose lives in the database (`bot.store.tickets`), so every process and
every restart agrees, and the unique key there lets one process only open a player's ticket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import discord

from bot.analytics.staff_response import escalation_timings
from bot.desk import ticket_texts as texts
from bot.desk.auto_close import CLOSE_ACTION as ESCALATION_CLOSED
from bot.discord_kit.members import role_names
from bot.discord_kit.posting import NO_MENTIONS
from bot.store import audit_views, conversation_views
from bot.store.tickets import (
    TicketRecord,
    claim_ticket,
    close_ticket,
    open_ticket,
    open_tickets,
    release_claim,
    set_ticket_thread,
    ticket_by_thread,
)
from bot.vocabulary import ThreadId
from bot.vocabulary.language import detect_language

if TYPE_CHECKING:
    from bot.players.discord_app.host import SupportClient

Answer = Callable[..., Awaitable[None]]
"""`answer(message, text, thread_id, *, channel=None)`: the run that answers a player's message."""

log = logging.getLogger(__name__)

ARCHIVE_AFTER_MINUTES = 10080
"""Discord's longest auto-archive; the bot archives a ticket itself when it closes."""
CLAIM_WAIT = 10.0
"""Seconds a process waits for the thread another process is creating for the same player."""
CLOSING_NOTICE_GRACE = timedelta(seconds=30)
"""An auto-closed escalation's notice is posted just after its audit row; the thread is archived after that."""


class TicketDesk:
    """The ticket side of one Discord client: routes messages in ticket channels, watches for closing."""

    def __init__(self, client: SupportClient, answer: Answer, *, every: float = 60.0) -> None:
        settings = client.settings
        self.client = client
        self.answer = answer
        """Answers a message in its thread (`PlayerMessages.handle`); `channel=` where it is answered."""
        self.channels = frozenset(settings.ticket_channels)
        self.staff_role = settings.staff_role
        self.idle_close = timedelta(hours=settings.ticket_idle_close_hours)
        self.every = every
        self.threads: set[int] = set()
        """Open ticket threads this process knows (loaded at start, kept as tickets open and close)."""
        self.checks = 0
        """Closing checks done so far (tests wait on it)."""
        self._task: asyncio.Task[None] | None = None

    @property
    def store(self) -> Any:
        return self.client.conversations.store

    def now(self) -> datetime:
        return self.client.conversations.clock()

    # ---- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        if not self.channels:
            return
        self.threads = {t.thread for t in await open_tickets(self.store) if t.thread is not None}
        self.client.add_listener(self.on_raw_thread_update, "on_raw_thread_update")
        self.client.add_listener(self.on_raw_thread_delete, "on_raw_thread_delete")
        if self.on_staff_notice not in self.client.conversations.staff_sinks:
            self.client.conversations.staff_sinks.append(self.on_staff_notice)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._watch())

    async def stop(self) -> None:
        with contextlib.suppress(ValueError):
            self.client.conversations.staff_sinks.remove(self.on_staff_notice)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    # ---- messages -------------------------------------------------------------------------------

    def takes(self, message: discord.Message) -> bool:
        """A player's message written in a ticket channel itself, or the starter message of a new forum
        post there. Staff write in the channel as before (commands, notes): they need no ticket."""
        channel = message.channel
        if message.guild is None or not self.channels:
            return False
        if any(r.name == self.staff_role for r in getattr(message.author, "roles", ())):
            return False
        if isinstance(channel, discord.Thread):
            return (
                channel.parent_id in self.channels
                and isinstance(channel.parent, discord.ForumChannel)
                and channel.id not in self.threads
                and message.id == channel.id
            )
        return channel.id in self.channels

    async def route(self, message: discord.Message, text: str) -> None:
        """Open the player's ticket and answer there, or point them to the one already open."""
        channel = message.channel
        author = message.author
        forum_post = isinstance(channel, discord.Thread)
        parent_id = channel.parent_id if isinstance(channel, discord.Thread) else channel.id
        locale = detect_language(text)
        topic = texts.ticket_topic(text)
        claim = await claim_ticket(
            self.store,
            guild_id=message.guild.id if message.guild else 0,
            channel_id=parent_id or 0,
            player=author.id,
            now=self.now(),
            topic=topic,
            message_id=message.id,
            thread=channel.id if forum_post else None,
        )
        if not claim.won:
            if claim.ticket.opened_by_message == message.id:
                return  # another process saw this very message and opened the ticket for it
            ticket = await self._wait_for_thread(claim.ticket)
            if ticket is not None and ticket.thread is not None:
                await self._redirect(message, ticket.thread, locale, close_post=forum_post)
            return
        name = texts.ticket_name(author.display_name, topic, locale)
        try:
            if isinstance(channel, discord.Thread):
                thread: discord.Thread = channel
                with contextlib.suppress(discord.HTTPException):  # a name is nice to have, not needed
                    await thread.edit(name=name)
            elif isinstance(channel, discord.TextChannel):
                thread = await self._open_private(channel, message, name, claim.ticket, text, locale)
            else:
                raise TypeError(f"channel {channel.id} cannot hold threads")
        except (discord.HTTPException, TypeError) as exc:
            log.error(
                "ticket for %s in %s not opened (%s); answering in the channel", author.id, parent_id, exc
            )
            await release_claim(self.store, claim.ticket.id)
            await self.answer(message, text, ThreadId.discord(channel.id))
            return
        self.threads.add(thread.id)
        who = await self.client.conversations.resolve_actor(
            str(author.id), role_names(author), author.display_name
        )
        await self.store.audit(
            actor=who.label,  # `player:P100` when linked, as every other audit row names a player
            action="ticket.opened",
            thread_id=ThreadId.discord(thread.id),
            target=f"ticket:{claim.ticket.id}",
        )
        await self.answer(message, text, ThreadId.discord(thread.id), channel=thread)

    async def _open_private(
        self,
        channel: discord.TextChannel,
        message: discord.Message,
        name: str,
        ticket: TicketRecord,
        text: str,
        locale: str,
    ) -> discord.Thread:
        thread = await channel.create_thread(
            name=name,
            type=discord.ChannelType.private_thread,
            invitable=False,  # the player cannot bring others in
            auto_archive_duration=ARCHIVE_AFTER_MINUTES,
            reason=f"ticket {ticket.id}",
        )
        await set_ticket_thread(self.store, ticket.id, thread.id)
        await thread.add_user(message.author)
        await thread.send(
            texts.opening_line(locale, message.author.display_name, text), allowed_mentions=NO_MENTIONS
        )
        with contextlib.suppress(discord.HTTPException):
            await message.reply(texts.opened_pointer(locale, thread.id), mention_author=False)
        return thread

    async def _wait_for_thread(self, ticket: TicketRecord) -> TicketRecord | None:
        """The ticket once its thread exists (another process may be creating it right now)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CLAIM_WAIT
        while ticket.thread is None and loop.time() < deadline:
            await asyncio.sleep(0.1)
            fresh = await open_ticket(self.store, ticket.channel_id, ticket.player)
            if fresh is None:
                return None
            ticket = fresh
        return ticket

    async def _redirect(
        self, message: discord.Message, thread_id: int, locale: str, *, close_post: bool
    ) -> None:
        with contextlib.suppress(discord.HTTPException):
            await message.reply(texts.redirect_to_open(locale, thread_id), mention_author=False)
        if close_post and isinstance(message.channel, discord.Thread):
            with contextlib.suppress(discord.HTTPException):  # a second forum post: one ticket at a time
                await message.channel.edit(archived=True, locked=True)

    # ---- staff ----------------------------------------------------------------------------------

    async def on_staff_notice(self, kind: str, payload: dict[str, Any]) -> None:
        """Staff sink: an escalation in a ticket brings the staff role in; a takeover adds the staffer."""
        if kind not in ("escalation", "handoff"):
            return
        thread_id = ThreadId(str(payload.get("thread_id") or ""))
        ident = thread_id.snowflake if thread_id.kind == "discord" else None
        if ident is None or not await self._is_open_ticket(ident):
            return
        try:
            thread = self.client.get_channel(ident) or await self.client.fetch_channel(ident)
            if not isinstance(thread, discord.Thread):
                return
            if kind == "escalation":
                await self._bring_staff(thread)
            else:
                by = str(payload.get("by") or "")
                if by.startswith("staff:") and by[6:].isdigit():
                    await thread.add_user(discord.Object(int(by[6:])))
        except discord.HTTPException:
            log.exception("could not add staff to ticket thread %s", ident)
            return
        await self.store.audit(actor="desk", action="ticket.staff_added", thread_id=thread_id, code=kind)

    async def _is_open_ticket(self, thread: int) -> bool:
        if thread not in self.threads:  # opened by another process since this one started
            ticket = await ticket_by_thread(self.store, thread)
            if ticket is None or not ticket.is_open:
                return False
            self.threads.add(thread)
        return True

    async def _bring_staff(self, thread: discord.Thread) -> None:
        """Mentioning a role in a private thread adds its members (Discord's rule); sent silently."""
        role = discord.utils.get(thread.guild.roles, name=self.staff_role)
        locale = await self._locale(thread.id)
        line = texts.staff_joined(locale)
        if role is None:
            log.warning("ticket %s: no role named %r to bring in", thread.id, self.staff_role)
            await thread.send(line, allowed_mentions=NO_MENTIONS)
            return
        await thread.send(
            f"{line} {role.mention}", allowed_mentions=discord.AllowedMentions(roles=[role]), silent=True
        )

    # ---- closing --------------------------------------------------------------------------------

    async def on_raw_thread_update(self, event: discord.RawThreadUpdateEvent) -> None:
        """Staff (or Discord's auto-archive) archived a ticket thread: the ticket is closed, and locked."""
        if event.thread_id in self.threads and (event.data.get("thread_metadata") or {}).get("archived"):
            ticket = await ticket_by_thread(self.store, event.thread_id)
            if ticket is not None and ticket.is_open:
                await self.close(ticket, "archived")

    async def on_raw_thread_delete(self, event: discord.RawThreadDeleteEvent) -> None:
        """A deleted ticket thread closes its ticket (the player is never pointed to a thread that is gone)."""
        ticket = await ticket_by_thread(self.store, event.thread_id)
        if ticket is not None and ticket.is_open:
            await self.close(ticket, "deleted", archive=False)

    async def close(
        self, ticket: TicketRecord, reason: str, *, archive: bool = True, notice: str | None = None
    ) -> bool:
        """Close the ticket once (whichever process gets there first), then say so and archive and lock
        its thread, so the player's next message in the channel opens a new ticket."""
        if not await close_ticket(self.store, ticket.id, reason=reason, now=self.now()):
            return False
        if ticket.thread is None:
            return True
        self.threads.discard(ticket.thread)
        thread_id = ThreadId.discord(ticket.thread)
        await self.store.audit(actor="desk", action="ticket.closed", thread_id=thread_id, code=reason)
        if not archive:
            return True
        try:
            thread = self.client.get_channel(ticket.thread) or await self.client.fetch_channel(ticket.thread)
            if isinstance(thread, discord.Thread):
                if notice:
                    await thread.send(notice, allowed_mentions=NO_MENTIONS)
                await thread.edit(archived=True, locked=True)
        except discord.HTTPException:
            log.exception("ticket %s closed, but its thread was not archived", ticket.id)
        return True

    async def check(self) -> list[tuple[int, str]]:
        """Close what is due: tickets whose escalation was auto-closed, and tickets quiet for the idle time
        that wait for no one. Returns (ticket id, reason) of each closed here."""
        now = self.now()
        closed: list[tuple[int, str]] = []
        plan = self.client.shard_plan
        for ticket in await open_tickets(self.store):
            if ticket.thread is None or (plan is not None and not plan.owns_message(ticket.guild_id)):
                continue
            reason = await self._due(ticket, now)
            if reason is None:
                continue
            notice = texts.closed_notice(await self._locale(ticket.thread)) if reason == "idle" else None
            if await self.close(ticket, reason, notice=notice):
                closed.append((ticket.id, reason))
        return closed

    async def _due(self, ticket: TicketRecord, now: datetime) -> str | None:
        thread_id = ThreadId.discord(ticket.thread or 0)
        auto_closed = await audit_views.count_in_thread(
            self.store, thread_id, ESCALATION_CLOSED, since=ticket.opened_at, until=now - CLOSING_NOTICE_GRACE
        )
        last = await conversation_views.last_message_at(self.store, thread_id)
        if auto_closed:
            return "escalation_closed"
        if now - max(last or ticket.opened_at, ticket.opened_at) < self.idle_close:
            return None
        if await self.client.conversations.store.threads.is_paused(thread_id):
            return None  # a person took over: staff close it
        waiting = [
            t
            for t in await escalation_timings(self.store, since=ticket.opened_at, until=now)
            if t.thread_id == thread_id and t.resolved_at is None
        ]
        return None if waiting else "idle"  # an escalation waiting for staff closes through auto-close

    async def _locale(self, thread: int) -> str:
        recent = await self.store.threads.recent(ThreadId.discord(thread), 20)
        said = [m.content for m in recent if m.role == "user" and m.content]
        return detect_language(said[-1]) if said else "ko"

    async def _watch(self) -> None:
        while True:
            try:
                await self.check()
            except Exception:  # a failed check is retried on the next tick; the watch never dies
                log.exception("ticket check failed")
            self.checks += 1
            await asyncio.sleep(self.every)
