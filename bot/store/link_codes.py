"""Self-service account links as stored: one-time link codes (only their SHA-256), the account link
itself (a Discord user ↔ a player, moved or replaced as staff's `/link` does), and the notices owed to
players whose code the game redeemed, and the refused codes counted per sending address and per player
(`link_code_failures`, shared by every web process). `link_codes` arrives with schema version 9,
`link_code_failures` with 12 (`models.UPGRADABLE_FROM`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Index, Integer, String, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.database import Store
from bot.store.game_events import EventRefused, ensure_player, write_session
from bot.store.models import Base, Player, UTCDateTime, utcnow

CODE_STATES = ("live", "used", "replaced")
"""`live`: may be redeemed until `expires_at`; `used`: redeemed once; `replaced`: a newer code was asked for."""
KEEP_FOR = timedelta(days=1)
"""Rows older than this are deleted when a new code is asked for (a told or unused code is history)."""


class LinkCode(Base):
    """A one-time code a Discord user asked for, to be typed in the game."""

    __tablename__ = "link_codes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    """SHA-256 (hex) of the normalized code; the code itself is shown once and never stored."""
    discord_id: Mapped[str] = mapped_column(String(32), index=True)
    """The Discord user who asked: the only one this code can link."""
    thread_id: Mapped[str] = mapped_column(String(100))
    """Where they asked (`discord:<channel>` or `dm:<user>`): where to tell them when a DM cannot be sent."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    state: Mapped[str] = mapped_column(String(16), default="live")
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    player_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """The player the game linked with this code."""
    told_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    """When the Discord user was told of the link (claimed by one process)."""


class LinkCodeFailure(Base):
    """One refused link code, counted against the address that sent it (`source`) and the player it was
    sent for (`player`): one row each."""

    __tablename__ = "link_code_failures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(8))
    """`source` or `player`."""
    key: Mapped[str] = mapped_column(String(200))
    at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)

    __table_args__ = (Index("ix_link_code_failures_key", "kind", "key", "at"),)


@dataclass(frozen=True)
class CodeRequest:
    """The outcome of asking for a code: `stored` False when the user asked too often (`retry_after` s)."""

    stored: bool
    expires_at: datetime | None = None
    retry_after: float = 0.0


@dataclass(frozen=True)
class LinkChange:
    """What one link did besides linking: the player the Discord user left, the Discord user replaced."""

    moved_from: str | None
    replaced_discord_id: str | None


@dataclass(frozen=True)
class Redeemed:
    """A code the game redeemed: whom it linked, and what the link moved."""

    code_id: int
    discord_id: str
    player_id: str
    change: LinkChange


@dataclass(frozen=True)
class LinkNotice:
    """A player to tell that their account is linked."""

    code_id: int
    discord_id: str
    thread_id: str
    player_id: str


async def store_code(
    store: Store,
    *,
    code_hash: str,
    discord_id: str,
    thread_id: str,
    now: datetime,
    ttl: timedelta,
    per_window: int,
    window: timedelta,
) -> CodeRequest:
    """Keep a new code for `discord_id` (their older live codes stop working), unless they asked for
    `per_window` codes within `window` already. Old rows are cleared on the way."""
    async with write_session(store) as s:
        since = now - window
        recent = list(
            (
                await s.execute(
                    select(LinkCode.created_at)
                    .where(LinkCode.discord_id == discord_id, LinkCode.created_at > since)
                    .order_by(LinkCode.created_at)
                )
            ).scalars()
        )
        if len(recent) >= per_window:
            wait = (recent[-per_window] + window - now).total_seconds()
            return CodeRequest(stored=False, retry_after=max(1.0, wait))
        await s.execute(delete(LinkCode).where(LinkCode.created_at < now - KEEP_FOR))
        await s.execute(
            update(LinkCode)
            .where(LinkCode.discord_id == discord_id, LinkCode.state == "live")
            .values(state="replaced")
        )
        s.add(
            LinkCode(
                code_hash=code_hash,
                discord_id=discord_id,
                thread_id=thread_id[:100],
                created_at=now,
                expires_at=now + ttl,
                state="live",
            )
        )
    return CodeRequest(stored=True, expires_at=now + ttl)


async def redeem_code(session: AsyncSession, code_hash: str, player_id: str, now: datetime) -> Redeemed:
    """Inside an event's transaction: link the code's Discord user to `player_id` and use the code up.
    `EventRefused` (`unknown_link_code`, `expired_link_code`, `used_link_code`) when it cannot link."""
    code = (
        await session.execute(select(LinkCode).where(LinkCode.code_hash == code_hash).with_for_update())
    ).scalar()
    if code is None:
        raise EventRefused("unknown_link_code")
    if code.state == "used":
        raise EventRefused("used_link_code")
    if code.state != "live" or code.expires_at <= now:
        raise EventRefused("expired_link_code")
    change = await link_account(session, code.discord_id, player_id)
    code.state = "used"
    code.used_at = now
    code.player_id = player_id
    return Redeemed(code.id, code.discord_id, player_id, change)


async def link_account(session: AsyncSession, discord_id: str, player_id: str) -> LinkChange:
    """Link `discord_id` to `player_id` (the player is created as a stub when unknown): the Discord user
    leaves the player it was linked to, and the player's previous Discord user is unlinked."""
    player = await ensure_player(session, player_id)
    holder = (await session.execute(select(Player).where(Player.discord_id == discord_id))).scalar()
    moved_from = holder.id if holder is not None and holder.id != player_id else None
    replaced = player.discord_id if player.discord_id not in (None, discord_id) else None
    if holder is not None and moved_from is not None:
        holder.discord_id = None
        await session.flush()  # the unique discord_id is free before the player takes it
    player.discord_id = discord_id
    return LinkChange(moved_from, replaced)


async def unlink_account(store: Store, discord_id: str) -> str | None:
    """Remove the Discord user's link; the player it was linked to, or None when there was none."""
    async with write_session(store) as s:
        player = (await s.execute(select(Player).where(Player.discord_id == discord_id))).scalar()
        if player is None:
            return None
        player.discord_id = None
        return player.id


async def pending_notices(store: Store, since: datetime, limit: int = 50) -> list[LinkNotice]:
    """Codes redeemed after `since` whose Discord user was not told yet, oldest first (an older notice
    that could not be sent is left: news of a link a day late is noise)."""
    async with store.session() as s:
        rows = await s.execute(
            select(LinkCode.id, LinkCode.discord_id, LinkCode.thread_id, LinkCode.player_id)
            .where(LinkCode.state == "used", LinkCode.told_at.is_(None), LinkCode.used_at > since)
            .order_by(LinkCode.id)
            .limit(limit)
        )
        return [LinkNotice(r.id, r.discord_id, r.thread_id, r.player_id or "") for r in rows]


async def claim_notice(store: Store, code_id: int, now: datetime) -> bool:
    """True for the one process whose conditional update marks the notice told (it then sends it)."""
    async with store.session() as s, s.begin():
        result = await s.execute(
            update(LinkCode).where(LinkCode.id == code_id, LinkCode.told_at.is_(None)).values(told_at=now)
        )
        return result.rowcount == 1


async def release_notice(store: Store, code_id: int) -> None:
    """Give a claimed notice back (sending failed): the next round tries again."""
    async with store.session() as s, s.begin():
        await s.execute(update(LinkCode).where(LinkCode.id == code_id).values(told_at=None))


async def live_codes(store: Store, discord_id: str, now: datetime) -> int:
    """How many codes of this Discord user could still be redeemed (tests, the operator)."""
    async with store.session() as s:
        count = await s.execute(
            select(func.count())
            .select_from(LinkCode)
            .where(LinkCode.discord_id == discord_id, LinkCode.state == "live", LinkCode.expires_at > now)
        )
        return int(count.scalar_one())


async def failure_wait(
    store: Store, limits: dict[tuple[str, str], int], window: timedelta, now: datetime
) -> float:
    """Seconds until link codes are taken again: for each (kind, key) whose refused codes within `window`
    reached its limit, until the oldest of the last `limit` of them leaves the window; 0 when none."""
    wait = 0.0
    async with store.session() as s:
        for (kind, key), limit in limits.items():
            hit = (
                await s.execute(
                    select(LinkCodeFailure.at)
                    .where(
                        LinkCodeFailure.kind == kind,
                        LinkCodeFailure.key == key,
                        LinkCodeFailure.at > now - window,
                    )
                    .order_by(LinkCodeFailure.at.desc())
                    .limit(1)
                    .offset(limit - 1)
                )
            ).scalar()
            if hit is not None:
                wait = max(wait, (hit + window - now).total_seconds())
    return wait


async def record_failure(store: Store, keys: list[tuple[str, str]], window: timedelta, now: datetime) -> None:
    """Count one refused code against each (kind, key); rows older than `window` are cleared on the way."""
    async with store.session() as s, s.begin():
        await s.execute(delete(LinkCodeFailure).where(LinkCodeFailure.at <= now - window))
        await s.execute(
            insert(LinkCodeFailure), [{"kind": kind, "key": key[:200], "at": now} for kind, key in keys]
        )
