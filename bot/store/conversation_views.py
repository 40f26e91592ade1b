"""What staff surfaces read about conversations: the threads with the latest activity (with their hand-off,
escalation and asker), a thread's messages, its latest answers and player messages, who the player is,
and what changes when its page must be redrawn."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from bot.store.database import Store
from bot.store.models import Escalation, Player, Run, ThreadMessage, ThreadState


@dataclass(frozen=True)
class ThreadActivity:
    """One thread with messages, as the conversations page lists it."""

    thread_id: str
    last: ThreadMessage
    """Its latest player or bot message."""
    messages: int
    """How many player and bot messages it holds."""
    handed_off: bool
    """A person took it over (`thread_state.handoff`)."""
    escalated: bool
    """It has an open escalation."""
    asker: str | None
    """The asker of its latest recorded run, None before any run was recorded."""


async def latest_threads(store: Store, *, limit: int, offset: int, search: str = "") -> list[ThreadActivity]:
    """Threads with player or bot messages, most recent first, `limit` from `offset`; only threads whose
    id or recorded asker contains `search` when it is given."""
    query = select(ThreadMessage.thread_id, func.max(ThreadMessage.id), func.count(ThreadMessage.id)).where(
        ThreadMessage.role.in_(("user", "assistant"))
    )
    if search:
        asked = select(Run.thread_id).where(Run.player.contains(search, autoescape=True))
        query = query.where(
            ThreadMessage.thread_id.contains(search, autoescape=True) | ThreadMessage.thread_id.in_(asked)
        )
    async with store.session() as s:
        latest = (
            await s.execute(
                query.group_by(ThreadMessage.thread_id)
                .order_by(func.max(ThreadMessage.id).desc())
                .limit(limit)
                .offset(offset)
            )
        ).all()
        if not latest:
            return []
        threads = [t for t, _, _ in latest]
        last = {
            m.id: m
            for m in (
                await s.execute(select(ThreadMessage).where(ThreadMessage.id.in_([i for _, i, _ in latest])))
            ).scalars()
        }
        paused = set(
            (
                await s.execute(
                    select(ThreadState.thread_id).where(
                        ThreadState.thread_id.in_(threads), ThreadState.handoff.is_(True)
                    )
                )
            ).scalars()
        )
        escalated = set(
            (
                await s.execute(
                    select(Escalation.thread_id).where(
                        Escalation.thread_id.in_(threads), Escalation.status == "open"
                    )
                )
            ).scalars()
        )
        askers: dict[str, str] = {}
        for t, p in (
            await s.execute(
                select(Run.thread_id, Run.player).where(Run.thread_id.in_(threads)).order_by(Run.started_at)
            )
        ).all():
            askers[t] = p
    return [
        ThreadActivity(t, last[last_id], int(count), t in paused, t in escalated, askers.get(t))
        for t, last_id, count in latest
    ]


async def message_count(store: Store, thread_id: str) -> int:
    """How many messages the thread holds (tool calls and results included)."""
    async with store.session() as s:
        total = (
            await s.execute(
                select(func.count()).select_from(ThreadMessage).where(ThreadMessage.thread_id == thread_id)
            )
        ).scalar_one()
    return int(total)


async def latest_messages(store: Store, thread_id: str, limit: int) -> list[ThreadMessage]:
    """The thread's latest `limit` messages, tool calls and results included, oldest first."""
    async with store.session() as s:
        rows = (
            await s.execute(
                select(ThreadMessage)
                .where(ThreadMessage.thread_id == thread_id)
                .order_by(ThreadMessage.id.desc())
                .limit(limit)
            )
        ).scalars()
        return list(reversed(list(rows)))


@dataclass(frozen=True)
class ThreadMark:
    """A thread's newest message id, its message count and whether a person took it over."""

    last_id: int
    messages: int
    handed_off: bool


async def thread_mark(store: Store, thread_id: str) -> ThreadMark:
    """What the stored thread looks like now (a page compares it with what it drew)."""
    async with store.session() as s:
        last_id, count = (
            await s.execute(
                select(func.max(ThreadMessage.id), func.count(ThreadMessage.id)).where(
                    ThreadMessage.thread_id == thread_id
                )
            )
        ).one()
        row = await s.get(ThreadState, thread_id)
    return ThreadMark(int(last_id or 0), int(count), bool(row and row.handoff))


async def is_handed_off(store: Store, thread_id: str) -> bool:
    """Whether a person took the thread over."""
    async with store.session() as s:
        row = await s.get(ThreadState, thread_id)
        return bool(row and row.handoff)


async def latest_answer_of(store: Store, thread_id: str, asker: str) -> str | None:
    """The run id of the thread's latest stored answer to a run `asker` asked for (message ids order it,
    even when two runs share a timestamp); None when there is none."""
    async with store.session() as s:
        return (
            await s.execute(
                select(Run.run_id)
                .join(ThreadMessage, ThreadMessage.run_id == Run.run_id)
                .where(
                    Run.thread_id == thread_id,
                    Run.player == asker,
                    ThreadMessage.thread_id == thread_id,
                    ThreadMessage.role == "assistant",
                )
                .order_by(ThreadMessage.id.desc())
                .limit(1)
            )
        ).scalar_one_or_none()


async def latest_run_since(store: Store, thread_id: str, asker: str, since: datetime) -> str | None:
    """The run id of the latest answer delivered to `asker` in the thread for a run started at `since`
    or later (by delivery time); None when there is none."""
    async with store.session() as s:
        return (
            await s.execute(
                select(Run.run_id)
                .where(Run.thread_id == thread_id, Run.player == asker, Run.started_at >= since)
                .order_by(Run.answered_at.desc())
                .limit(1)
            )
        ).scalar_one_or_none()


async def latest_run(store: Store, thread_id: str) -> str | None:
    """The run id of the thread's latest delivered answer, whoever asked; None when there is none."""
    async with store.session() as s:
        return (
            await s.execute(
                select(Run.run_id).where(Run.thread_id == thread_id).order_by(Run.answered_at.desc()).limit(1)
            )
        ).scalar_one_or_none()


async def last_message_at(store: Store, thread_id: str) -> datetime | None:
    """When the thread's newest message was stored; None for a thread without messages."""
    async with store.session() as s:
        return (
            await s.execute(
                select(func.max(ThreadMessage.created_at)).where(ThreadMessage.thread_id == thread_id)
            )
        ).scalar_one()


@dataclass(frozen=True)
class PlayerWords:
    """The player's latest message in a thread: when and what."""

    at: datetime
    content: str


async def last_player_message(store: Store, thread_id: str) -> PlayerWords | None:
    """The thread's latest player message (the newest by its time), None when the player never wrote."""
    async with store.session() as s:
        last = (
            await s.execute(
                select(ThreadMessage.created_at, ThreadMessage.content)
                .where(ThreadMessage.thread_id == thread_id, ThreadMessage.role == "user")
                .where(
                    ThreadMessage.created_at
                    == select(func.max(ThreadMessage.created_at))
                    .where(ThreadMessage.thread_id == thread_id, ThreadMessage.role == "user")
                    .scalar_subquery()
                )
                .limit(1)
            )
        ).first()
    return PlayerWords(last.created_at, last.content or "") if last is not None else None


@dataclass(frozen=True)
class ThreadPlayer:
    """What a conversation tells about its player: their latest message and their name on file."""

    last_words: str | None
    """The player's latest message (by message order), None when they never wrote."""
    name: str | None
    """The name of the player the thread's escalation or recorded runs name, None when unknown."""


async def thread_player(store: Store, thread_id: str) -> ThreadPlayer:
    """The player's latest message in the thread, and the name of the player its newest escalation names
    (else its newest run asked as `player:<id>`)."""
    async with store.session() as s:
        last = (
            await s.execute(
                select(ThreadMessage.content)
                .where(ThreadMessage.thread_id == thread_id, ThreadMessage.role == "user")
                .order_by(ThreadMessage.id.desc())
                .limit(1)
            )
        ).scalar_one_or_none()
        player_id = (
            await s.execute(
                select(Escalation.player_id)
                .where(Escalation.thread_id == thread_id, Escalation.player_id.is_not(None))
                .order_by(Escalation.id.desc())
                .limit(1)
            )
        ).scalar_one_or_none()
        if player_id is None:
            label = (
                await s.execute(
                    select(Run.player)
                    .where(Run.thread_id == thread_id, Run.player.startswith("player:"))
                    .order_by(Run.started_at.desc())
                    .limit(1)
                )
            ).scalar_one_or_none()
            player_id = label.removeprefix("player:") if label else None
        player = await s.get(Player, player_id) if player_id else None
    return ThreadPlayer(last, player.name if player is not None else None)
