"""Threads' storage: the messages of each `thread_id` (`thread_messages`), its summaries
(`thread_summaries`) and its state (`thread_state`: the `/thread reset` point and the staff pause).

What a history means for the model (repairing dangling tool calls, write-behind) is `bot.memory`'s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Text, bindparam, false, func, literal_column, null, select, type_coerce, union_all

from bot.store.models import ThreadMessage, ThreadState, ThreadSummary, utcnow
from bot.store.units import Fetch, Insert, TableRows, Unit, UnitRunner

VISIBLE_KINDS = frozenset({"query", "interrupt", "answer"})
"""Message kinds `/thread show` lists; engine bookkeeping (JSON-mode steps, observations) is hidden."""

_MESSAGES = ThreadMessage.__table__
MESSAGE_COLUMNS = (
    "thread_id",
    "run_id",
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "name",
    "pinned",
    "meta",
    "created_at",
)

_RESET_POINT = func.coalesce(
    select(ThreadState.reset_before_id)
    .where(ThreadState.thread_id == bindparam("thread_id"))
    .scalar_subquery(),
    0,
)
"""The thread's `/thread reset` point (0: never reset), as a value inside the statements below."""
_LATEST_SUMMARY = (
    select(ThreadSummary.upto_message_id, ThreadSummary.summary)
    .where(ThreadSummary.thread_id == bindparam("thread_id"), ThreadSummary.upto_message_id > _RESET_POINT)
    .order_by(ThreadSummary.id.desc())
    .limit(1)
    .cte("latest_summary")
)
_SUMMARY_PART, _MESSAGE_PART, _COUNT_PART, _RESET_PART = 0, 1, 2, 3
_SINCE = func.coalesce(select(_LATEST_SUMMARY.c.upto_message_id).scalar_subquery(), 0)
"""The latest summary's last message (0: none): the thread starts after it and after the reset point."""
_THREAD = union_all(
    select(
        literal_column(str(_MESSAGE_PART)).label("part"),
        _MESSAGES.c.id,
        _MESSAGES.c.role,
        _MESSAGES.c.content,
        # Read as the stored text and decoded in `_to_message` only when there are calls: most rows hold
        # JSON `null`, which the column type would decode for every row of every load.
        type_coerce(_MESSAGES.c.tool_calls, Text).label("tool_calls"),
        _MESSAGES.c.tool_call_id,
        _MESSAGES.c.name,
        _MESSAGES.c.pinned,
    ).where(
        _MESSAGES.c.thread_id == bindparam("thread_id"),
        _MESSAGES.c.id > _RESET_POINT,
        _MESSAGES.c.id > _SINCE,
        _MESSAGES.c.id > bindparam("after"),
    ),
    select(
        literal_column(str(_SUMMARY_PART)),
        _LATEST_SUMMARY.c.upto_message_id,
        null(),
        _LATEST_SUMMARY.c.summary,
        null(),
        null(),
        null(),
        false(),
    ),
    select(
        literal_column(str(_COUNT_PART)),
        select(func.count())
        .select_from(_MESSAGES)
        .where(
            _MESSAGES.c.thread_id == bindparam("thread_id"),
            _MESSAGES.c.id > _RESET_POINT,
            _MESSAGES.c.id > _SINCE,
        )
        .scalar_subquery(),
        null(),
        null(),
        null(),
        null(),
        null(),
        false(),
    ),
    select(literal_column(str(_RESET_PART)), _RESET_POINT, null(), null(), null(), null(), null(), false()),
).order_by("part", "id")
"""A thread as `Threads.load` gives it, in one statement (one snapshot on every backend, no transaction
to open): the latest summary after the reset point as a row of its own (`part` 0), then the messages after
both and after `after`, oldest first, then how many messages follow the summary and the reset point in
all (`part` 2) and the reset point (`part` 3): a caller that holds the earlier messages knows from these
whether what it holds is still the thread's start."""
_NEWEST_SINCE = (
    select(_MESSAGES.c.role, _MESSAGES.c.content, _MESSAGES.c.meta, _MESSAGES.c.run_id)
    .where(_MESSAGES.c.thread_id == bindparam("thread_id"), _MESSAGES.c.id > _RESET_POINT)
    .order_by(_MESSAGES.c.id.desc())
    .limit(bindparam("limit"))
)
_PAUSED = select(ThreadState.handoff).where(ThreadState.thread_id == bindparam("thread_id"))


@dataclass(frozen=True)
class StoredThread:
    """A thread as the model will read it, from the last `/thread reset` on."""

    summary: str | None
    """The latest summary after the reset point: it stands for every message up to it."""
    messages: list[dict[str, Any]]
    """The messages after the reset point and the summary (and after `after`, when given), oldest first,
    in OpenAI format with `pinned` and a private `_id`."""
    count: int = 0
    """How many messages follow the reset point and the summary in all (`after` aside)."""
    reset_point: int = 0
    """The `/thread reset` point: the id before which the model reads nothing (0: never reset)."""
    summary_upto: int = 0
    """The last message id `summary` stands for (0: no summary)."""


def message_row(
    thread_id: str, message: dict[str, Any], *, run_id: str | None, pinned: bool, kind: str | None
) -> dict[str, Any]:
    """The stored row of one OpenAI-format message (`kind`: query, interrupt, answer, … kept in `meta`)."""
    return {
        "thread_id": thread_id,
        "run_id": run_id,
        "role": message["role"],
        "content": message.get("content"),
        "tool_calls": message.get("tool_calls") or None,
        "tool_call_id": message.get("tool_call_id"),
        "name": message.get("name"),
        "pinned": bool(pinned or message.get("pinned")),
        "meta": {"kind": kind} if kind else None,
        "created_at": utcnow(),
    }


def answer_rows(thread_id: str, text: str, run_id: str | None) -> TableRows:
    """The thread message of a delivered answer, for a caller that writes it in its own transaction
    (`Store.insert_rows`: the run's answer with its analytics rows)."""
    message = {"role": "assistant", "content": text}
    return ThreadMessage.__table__, [
        message_row(thread_id, message, run_id=run_id, pinned=False, kind="answer")
    ]


def _tool_calls(stored: Any) -> Any:
    """A row's `tool_calls` as the JSON column would give it: SQLite hands over the stored text, a
    PostgreSQL connection's JSON codec the decoded value already."""
    if isinstance(stored, str):
        return None if stored == "null" else json.loads(stored)
    return stored


def _to_message(row: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": row.role, "content": row.content}
    calls = _tool_calls(row.tool_calls)
    if calls:
        msg["tool_calls"] = calls
    if row.tool_call_id:
        msg["tool_call_id"] = row.tool_call_id
    if row.name:
        msg["name"] = row.name
    if row.pinned:
        msg["pinned"] = True
    msg["_id"] = row.id
    return msg


class Threads:
    """`store.threads`: load and append a thread's messages, its summaries, reset point and pause."""

    def __init__(self, store: UnitRunner) -> None:
        self._store = store

    async def load(self, thread_id: str, *, after: int = 0) -> StoredThread:
        """The latest summary after the reset point and the messages after both, in one statement; with
        `after`, only the messages after that id (a caller that holds the earlier ones: `ThreadMemory`)."""

        def unit() -> Unit[StoredThread]:
            rows = yield Fetch(_THREAD, {"thread_id": thread_id, "after": after})
            summary, summary_upto, count, reset_point = None, 0, 0, 0
            messages = []
            for r in rows:
                if r.part == _MESSAGE_PART:
                    messages.append(_to_message(r))
                elif r.part == _SUMMARY_PART:
                    summary, summary_upto = r.content, r.id
                elif r.part == _COUNT_PART:
                    count = r.id
                else:
                    reset_point = r.id
            return StoredThread(summary, messages, count, reset_point, summary_upto)

        return await self._store.run(unit, write=False, snapshot=False)

    async def since_reset(self, thread_id: str, limit: int) -> list[Any]:
        """The newest `limit` messages since the thread's `/thread reset`, oldest first, each with `role`,
        `content`, `meta` and `run_id` (summaries aside: what was said, for the fact check's evidence)."""

        def unit() -> Unit[list[Any]]:
            rows = yield Fetch(_NEWEST_SINCE, {"thread_id": thread_id, "limit": limit})
            return list(reversed(rows))

        return await self._store.run(unit, write=False, snapshot=False, off_loop=True)

    async def append(self, rows: list[dict[str, Any]]) -> list[int]:
        """Store `rows` (`message_row`s) in one transaction; their ids, in order."""
        if not rows:
            return []

        def unit() -> Unit[list[int]]:
            return (yield Insert(_MESSAGES, MESSAGE_COLUMNS, rows, ids=True))

        return await self._store.run(unit, write=True)

    async def is_paused(self, thread_id: str) -> bool:
        """Staff took the thread over (`/handoff`): the bot stores messages but does not answer."""

        def unit() -> Unit[bool]:
            row = yield Fetch(_PAUSED, {"thread_id": thread_id}, one=True)
            return bool(row and row[0])

        return await self._store.run(unit, write=False, snapshot=False)

    async def set_paused(self, thread_id: str, paused: bool, *, by: str) -> None:
        """Pause (hand off to staff) or resume the thread; audited."""
        async with self._store.session() as s, s.begin():
            state = await s.get(ThreadState, thread_id)
            if state is None:
                s.add(ThreadState(thread_id=thread_id, handoff=paused, handoff_by=by))
            else:
                state.handoff = paused
                state.handoff_by = by
        await self._store.audit(actor=by, action="handoff" if paused else "resume", thread_id=thread_id)

    async def save_summary(self, thread_id: str, upto_message_id: int, summary: str) -> None:
        """From now on `load` starts with `summary` instead of the messages up to `upto_message_id`."""
        async with self._store.session() as s:
            s.add(ThreadSummary(thread_id=thread_id, upto_message_id=upto_message_id, summary=summary))
            await s.commit()

    async def recent(self, thread_id: str, limit: int = 20) -> list[ThreadMessage]:
        """The last `limit` user and assistant messages people wrote or read (for `/thread show`)."""
        async with self._store.session() as s:
            state = await s.get(ThreadState, thread_id)
            reset_before = state.reset_before_id if state else 0
            rows = (
                await s.execute(
                    select(ThreadMessage)
                    .where(
                        ThreadMessage.thread_id == thread_id,
                        ThreadMessage.id > reset_before,
                        ThreadMessage.role.in_(("user", "assistant")),
                        ThreadMessage.content.is_not(None),
                    )
                    .order_by(ThreadMessage.id.desc())
                    .limit(limit * 5 + 20)
                )
            ).scalars()
            visible = [
                r
                for r in rows
                if not r.tool_calls and ((r.meta or {}).get("kind") in VISIBLE_KINDS or not r.meta)
            ]
        return list(reversed(visible[:limit]))

    async def reset(self, thread_id: str) -> None:
        """Forget the conversation for the model (rows stay for audit); `/thread reset`."""
        async with self._store.session() as s:
            last = (
                await s.execute(
                    select(func.max(ThreadMessage.id)).where(ThreadMessage.thread_id == thread_id)
                )
            ).scalar_one_or_none() or 0
            state = await s.get(ThreadState, thread_id)
            if state is None:
                s.add(ThreadState(thread_id=thread_id, reset_before_id=last))
            else:
                state.reset_before_id = last
            await s.commit()
