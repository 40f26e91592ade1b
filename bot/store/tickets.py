"""Ticket threads (issue 26): which Discord thread is each player's open ticket in a ticket channel.

A unique key on (channel, player, open slot) lets only one process or shard open a player's ticket: the
slot is 1 while the ticket is open and NULL once it is closed (NULLs never collide), so closed tickets
stay as history and a new one can open. The table arrives with schema version 7 (`models.UPGRADABLE_FROM`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Integer, String, UniqueConstraint, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.models import Base, UTCDateTime
from bot.store.units import is_unique_violation

OPEN = 1
CLAIM_TIMEOUT = timedelta(seconds=60)
"""A claim whose thread was never created (the process died in between) is taken over after this long."""


class Ticket(Base):
    """One player's ticket in one ticket channel: the Discord thread (or forum post) it lives in."""

    __tablename__ = "tickets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    guild_id: Mapped[str] = mapped_column(String(32))
    channel_id: Mapped[str] = mapped_column(String(32))
    """The ticket channel (a text channel, or a forum) the ticket was opened from."""
    player: Mapped[str] = mapped_column(String(32))
    """The player's Discord user id."""
    thread: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """The Discord thread's channel id; None while the process that claimed the ticket creates it."""
    opened_by_message: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """The message that opened it (another process that saw the same message stays silent)."""
    topic: Mapped[str] = mapped_column(String(100), default="")
    opened_at: Mapped[datetime] = mapped_column(UTCDateTime())
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    close_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    open_slot: Mapped[int | None] = mapped_column(Integer, nullable=True, default=OPEN)
    """1 while open, NULL once closed: the unique key below allows one open ticket per player and channel."""

    __table_args__ = (
        UniqueConstraint("channel_id", "player", "open_slot", name="uq_tickets_one_open"),
        UniqueConstraint("thread", name="uq_tickets_thread"),
    )


@dataclass(frozen=True)
class TicketRecord:
    """A ticket as the channels see it."""

    id: int
    guild_id: int
    channel_id: int
    player: int
    thread: int | None
    opened_by_message: int | None
    topic: str
    opened_at: datetime
    closed_at: datetime | None = None
    close_reason: str | None = None

    @property
    def is_open(self) -> bool:
        return self.closed_at is None

    @classmethod
    def of(cls, row: Ticket) -> TicketRecord:
        def num(v: str | None) -> int | None:
            return int(v) if v else None

        return cls(
            id=row.id,
            guild_id=int(row.guild_id),
            channel_id=int(row.channel_id),
            player=int(row.player),
            thread=num(row.thread),
            opened_by_message=num(row.opened_by_message),
            topic=row.topic,
            opened_at=row.opened_at,
            closed_at=row.closed_at,
            close_reason=row.close_reason,
        )


@dataclass(frozen=True)
class TicketClaim:
    """The outcome of `claim_ticket`: `won` when this caller must create the thread of `ticket`."""

    won: bool
    ticket: TicketRecord


async def open_ticket(store: Any, channel_id: int, player: int) -> TicketRecord | None:
    """The player's open ticket in the channel (possibly still without its thread), or None."""
    async with store.session() as s:
        row = (
            await s.execute(
                select(Ticket).where(
                    Ticket.channel_id == str(channel_id),
                    Ticket.player == str(player),
                    Ticket.open_slot == OPEN,
                )
            )
        ).scalar_one_or_none()
        return TicketRecord.of(row) if row is not None else None


async def ticket_by_thread(store: Any, thread: int) -> TicketRecord | None:
    """The ticket that lives in this Discord thread (open or closed), or None."""
    async with store.session() as s:
        row = (await s.execute(select(Ticket).where(Ticket.thread == str(thread)))).scalar_one_or_none()
        return TicketRecord.of(row) if row is not None else None


async def open_tickets(store: Any) -> list[TicketRecord]:
    """Every open ticket, oldest first."""
    async with store.session() as s:
        rows = (await s.execute(select(Ticket).where(Ticket.open_slot == OPEN).order_by(Ticket.id))).scalars()
        return [TicketRecord.of(r) for r in rows]


async def claim_ticket(
    store: Any,
    *,
    guild_id: int,
    channel_id: int,
    player: int,
    now: datetime,
    topic: str = "",
    message_id: int | None = None,
    thread: int | None = None,
) -> TicketClaim:
    """Open a ticket for the player, or find the one already open. Exactly one caller wins per open
    ticket, across processes: the unique key decides. A claim left without a thread for `CLAIM_TIMEOUT`
    (its process died) is removed and claimed again."""
    for _ in range(3):
        async with store.session() as s:
            s.add(
                Ticket(
                    guild_id=str(guild_id),
                    channel_id=str(channel_id),
                    player=str(player),
                    thread=str(thread) if thread is not None else None,
                    opened_by_message=str(message_id) if message_id is not None else None,
                    topic=topic[:100],
                    opened_at=now,
                    open_slot=OPEN,
                )
            )
            try:
                await s.commit()
            except IntegrityError as exc:
                await s.rollback()
                if not is_unique_violation(exc):
                    raise
            else:
                won = await open_ticket(store, channel_id, player)
                if won is not None:
                    return TicketClaim(True, won)
                continue
        held = await open_ticket(store, channel_id, player)
        if held is None:
            continue  # closed in between: try again
        if held.thread is None and now - held.opened_at >= CLAIM_TIMEOUT:
            await release_claim(store, held.id)
            continue
        return TicketClaim(False, held)
    raise RuntimeError(f"could not claim a ticket for {player} in {channel_id}")


async def set_ticket_thread(store: Any, ticket_id: int, thread: int) -> None:
    """Record the Discord thread the claim's owner created."""
    async with store.session() as s:
        await s.execute(update(Ticket).where(Ticket.id == ticket_id).values(thread=str(thread)))
        await s.commit()


async def release_claim(store: Any, ticket_id: int) -> None:
    """Drop a claim whose thread could not be created (or was never), so the next message tries again."""
    async with store.session() as s:
        await s.execute(delete(Ticket).where(Ticket.id == ticket_id, Ticket.open_slot == OPEN))
        await s.commit()


async def close_ticket(store: Any, ticket_id: int, *, reason: str, now: datetime) -> bool:
    """Close an open ticket; True for the one caller that closed it (a second close changes nothing)."""
    async with store.session() as s:
        result = await s.execute(
            update(Ticket)
            .where(Ticket.id == ticket_id, Ticket.open_slot == OPEN)
            .values(open_slot=None, closed_at=now, close_reason=reason[:32])
        )
        await s.commit()
        return bool(result.rowcount)
