"""The game's signed events as stored (DESIGN.md §11.3): which event ids were applied (idempotency), and
the writes an event makes — an order upserted only when newer, a player upserted. One event is one
transaction: `apply_event` records the id and runs the event's writes together, or neither.
The table arrives with schema version 9 (`models.UPGRADABLE_FROM`).

`order.upserted` and `player.upserted` — the bulk of what a game sends — run as store units
(`record_order_event`, `record_player_event`: `bot.store.units`), on the fast path the rest of the store
uses (file SQLite's group-committed writer, plain asyncpg); `account.link` keeps its session
(`apply_event`), as it is rare and its writes are those of staff linking."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import String, bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.backends.engine import begin_immediate
from bot.store.database import Store
from bot.store.models import Base, Order, Player, UTCDateTime, utcnow
from bot.store.units import Fetch, Insert, RaceLost, Unit

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


# -- the fast path: order and player events as store units --------------------------------------------

_EVENT_SEEN = select(GameEvent.id).where(GameEvent.id == bindparam("id"))
_ORDER_STORED = select(Order.updated_at).where(Order.id == bindparam("id")).with_for_update()
"""The stored order's time, its row locked (PostgreSQL) so two events of one order take turns; file
SQLite's write unit holds the file's write lock already."""
_PLAYER_STORED = select(Player.id).where(Player.id == bindparam("id")).with_for_update()
_ORDER_COLUMNS = ("id", "player_id", "status", "item", "amount", "currency", "ordered_at", "updated_at")
_UPDATE_ORDER = (
    update(Order)
    .where(Order.id == bindparam("id"))
    .values({c: bindparam(c, type_=Order.__table__.c[c].type) for c in _ORDER_COLUMNS if c != "id"})
    .returning(Order.id)
)
"""The game's `updated_at` is written as given (the column's `onupdate` is overridden)."""
_UPDATE_PLAYER = (
    update(Player)
    .where(Player.id == bindparam("id"))
    .values(name=bindparam("name"), locale=bindparam("locale"))
    .returning(Player.id)
)
_PLAYER_COLUMNS = ("id", "name", "locale", "created_at")
_EVENT_COLUMNS = ("id", "type", "outcome", "received_at")


def _event_row(event_id: str, event_type: str, outcome: str, now: datetime) -> dict[str, Any]:
    return {"id": event_id, "type": event_type, "outcome": outcome, "received_at": now}


def order_event_unit(event_id: str, order: OrderFacts, now: datetime) -> Unit[str]:
    """`duplicate` for an id taken before; else the order written when new or newer (`applied`) or left
    as it is (`stale`), its player created as a stub when unknown, and the id recorded — together."""
    if (yield Fetch(_EVENT_SEEN, {"id": event_id}, one=True)) is not None:
        return "duplicate"
    stored = yield Fetch(_ORDER_STORED, {"id": order.id}, one=True)
    outcome = "stale" if stored is not None and stored.updated_at >= order.updated_at else "applied"
    if outcome == "applied":
        if (yield Fetch(_PLAYER_STORED, {"id": order.player_id}, one=True)) is None:
            stub = {"id": order.player_id, "name": order.player_id, "locale": "ko", "created_at": now}
            yield Insert(Player.__table__, _PLAYER_COLUMNS, [stub])
        row = asdict(order)
        if stored is None:
            yield Insert(Order.__table__, _ORDER_COLUMNS, [row])
        else:
            yield Fetch(_UPDATE_ORDER, row)
    yield Insert(GameEvent.__table__, _EVENT_COLUMNS, [_event_row(event_id, "order.upserted", outcome, now)])
    return outcome


def player_event_unit(event_id: str, player_id: str, name: str, locale: str, now: datetime) -> Unit[str]:
    """`duplicate` for an id taken before; else the player created or renamed (its account link stays),
    and the id recorded — together."""
    if (yield Fetch(_EVENT_SEEN, {"id": event_id}, one=True)) is not None:
        return "duplicate"
    changed = yield Fetch(_UPDATE_PLAYER, {"id": player_id, "name": name, "locale": locale})
    if not changed:
        row = {"id": player_id, "name": name, "locale": locale, "created_at": now}
        yield Insert(Player.__table__, _PLAYER_COLUMNS, [row])
    yield Insert(
        GameEvent.__table__, _EVENT_COLUMNS, [_event_row(event_id, "player.upserted", "applied", now)]
    )
    return "applied"


async def run_event_unit(store: Store, unit: Callable[[], Unit[str]]) -> str:
    """Run an event's unit in one write transaction. A lost insert race (the same event id, or the same
    new order or player, written by another request at the same moment) runs it once more: it then
    sees the other's row (`duplicate`, or an update instead of an insert)."""
    try:
        return await store.run(unit, write=True)
    except RaceLost:
        return await store.run(unit, write=True)
