"""The ticket table (issue 26): one open ticket per player and ticket channel, whoever races for it, on
SQLite and on PostgreSQL; closing frees the slot for a new ticket and keeps the old one as history."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.store import Store
from bot.store.tickets import (
    CLAIM_TIMEOUT,
    claim_ticket,
    close_ticket,
    open_ticket,
    open_tickets,
    set_ticket_thread,
    ticket_by_thread,
)

NOW = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)
CHANNEL, GUILD, PLAYER = 810, 800, 9001


async def _store(url: str) -> Store:
    store = Store(url)
    await store.open()
    return store


async def test_twenty_concurrent_claims_from_two_processes_open_one_ticket(db_url: str) -> None:
    a, b = await _store(db_url), await _store(db_url)  # two processes: two engines on one database
    try:
        claims = await asyncio.gather(
            *(
                claim_ticket(
                    s, guild_id=GUILD, channel_id=CHANNEL, player=PLAYER, now=NOW, message_id=1000 + i
                )
                for i, s in enumerate([a, b] * 10)
            )
        )
        winners = [c for c in claims if c.won]
        assert len(winners) == 1
        assert {c.ticket.id for c in claims} == {winners[0].ticket.id}
        assert len(await open_tickets(a)) == 1
    finally:
        await a.close()
        await b.close()


async def test_closing_frees_the_slot_and_keeps_the_closed_ticket(db_url: str) -> None:
    store = await _store(db_url)
    try:
        first = await claim_ticket(
            store, guild_id=GUILD, channel_id=CHANNEL, player=PLAYER, now=NOW, topic="환불"
        )
        await set_ticket_thread(store, first.ticket.id, 5001)
        assert (await open_ticket(store, CHANNEL, PLAYER)).thread == 5001
        assert await close_ticket(store, first.ticket.id, reason="idle", now=NOW + timedelta(hours=1))
        assert not await close_ticket(store, first.ticket.id, reason="idle", now=NOW + timedelta(hours=2))
        assert await open_ticket(store, CHANNEL, PLAYER) is None
        old = await ticket_by_thread(store, 5001)
        assert old is not None and not old.is_open and old.close_reason == "idle" and old.topic == "환불"

        second = await claim_ticket(store, guild_id=GUILD, channel_id=CHANNEL, player=PLAYER, now=NOW)
        assert second.won and second.ticket.id != first.ticket.id
        # Another player, or the same player in another ticket channel, is not held back.
        assert (await claim_ticket(store, guild_id=GUILD, channel_id=CHANNEL, player=9002, now=NOW)).won
        assert (await claim_ticket(store, guild_id=GUILD, channel_id=811, player=PLAYER, now=NOW)).won
    finally:
        await store.close()


async def test_a_claim_whose_thread_was_never_made_is_taken_over_after_the_timeout(db_url: str) -> None:
    store = await _store(db_url)
    try:
        dead = await claim_ticket(store, guild_id=GUILD, channel_id=CHANNEL, player=PLAYER, now=NOW)
        soon = await claim_ticket(
            store, guild_id=GUILD, channel_id=CHANNEL, player=PLAYER, now=NOW + timedelta(seconds=5)
        )
        assert dead.won and not soon.won and soon.ticket.id == dead.ticket.id
        later = await claim_ticket(
            store, guild_id=GUILD, channel_id=CHANNEL, player=PLAYER, now=NOW + CLAIM_TIMEOUT
        )
        assert later.won and later.ticket.opened_at == NOW + CLAIM_TIMEOUT  # a fresh claim
    finally:
        await store.close()
