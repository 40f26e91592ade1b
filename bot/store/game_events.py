"""The game's signed events as stored (DESIGN.md §11.3): which event ids were applied (idempotency), and
the writes an event makes — an order upserted only when newer, a player upserted. One event is one
transaction: `apply_event` records the id and runs the event's writes together, or neither.
The table arrives with schema version 9 (`models.UPGRADABLE_FROM`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import String, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.backends.engine import begin_immediate
from bot.store.database import Store
from bot.store.models import Base, Order, Player, UTCDateTime, utcnow

EVENT_OUTCOMES = ("applied", "stale")
"""What an event did; a repeated id is answered `duplicate` without touching anything."""


class GameEvent(Base):
    """One event the game sent and the bot took (applied, or recognised as older than what it holds)."""

    __tablename__ = "game_events"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    """The game's event id: a second delivery of it is a duplicate."""
    type: Mapped[str] = mapped_column(String(40))
    outcome: Mapped[str] = mapped_column(String(16))
    """`applied` or `stale`."""
    received_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class EventRefused(Exception):
    """The event cannot be applied (e.g. an unknown link code): its transaction is rolled back."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class OrderFacts:
    """An order as the game describes it (`order.upserted`'s data, validated)."""

    id: str
    player_id: str
    status: str
    item: str
    amount: int
    currency: str
    ordered_at: datetime
    updated_at: datetime


@asynccontextmanager
async def write_session(store: Store) -> AsyncIterator[AsyncSession]:
    """A session in one transaction, committed on success. On SQLite it holds the file's write lock from
    its first read (`BEGIN IMMEDIATE`), so two events racing for one link code or one order see each
    other's writes; PostgreSQL's row locks (`with_for_update`) do the same there."""
    async with store.session() as session, session.begin():
        conn = await session.connection()
        if conn.dialect.name == "sqlite":
            await begin_immediate(conn)
        yield session


async def apply_event(
    store: Store,
    event_id: str,
    event_type: str,
    apply: Callable[[AsyncSession], Awaitable[str]],
    *,
    now: datetime | None = None,
) -> str:
    """Apply one event exactly once: `duplicate` when its id was taken before, else what `apply(session)`
    returns (`applied` / `stale`), recorded with the id in the same transaction. `EventRefused` from
    `apply` rolls everything back and propagates."""
    try:
        async with write_session(store) as s:
            if await s.get(GameEvent, event_id) is not None:
                return "duplicate"
            outcome = await apply(s)
            s.add(GameEvent(id=event_id, type=event_type, outcome=outcome, received_at=now or utcnow()))
    except IntegrityError:
        # The same id delivered twice at once: the other delivery committed first.
        async with store.session() as s:
            if await s.get(GameEvent, event_id) is not None:
                return "duplicate"
        raise
    return outcome


async def ensure_player(session: AsyncSession, player_id: str) -> Player:
    """The player, created as a stub (its id as its name) when the game names one the bot never saw."""
    player = await session.get(Player, player_id)
    if player is None:
        player = Player(id=player_id, name=player_id, locale="ko")
        session.add(player)
        await session.flush()
    return player


async def upsert_order_if_newer(session: AsyncSession, order: OrderFacts) -> bool:
    """Write the order when it is new or its `updated_at` is later than the stored one; False (nothing
    written) when the stored order is as new or newer — an event that arrived out of order."""
    stored = (await session.execute(select(Order).where(Order.id == order.id).with_for_update())).scalar()
    if stored is not None and stored.updated_at >= order.updated_at:
        return False
    await ensure_player(session, order.player_id)
    if stored is None:
        stored = Order(id=order.id)
        session.add(stored)
    stored.player_id = order.player_id
    stored.status = order.status
    stored.item = order.item
    stored.amount = order.amount
    stored.currency = order.currency
    stored.ordered_at = order.ordered_at
    stored.updated_at = order.updated_at  # the game's time, not ours (the column's onupdate is overridden)
    return True


async def upsert_player(session: AsyncSession, player_id: str, name: str, locale: str) -> None:
    """Create or rename the player and set its language; its account link stays as it is."""
    player = await session.get(Player, player_id)
    if player is None:
        session.add(Player(id=player_id, name=name, locale=locale))
        return
    player.name = name
    player.locale = locale
