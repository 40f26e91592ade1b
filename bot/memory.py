"""ThreadMemory: the persisted conversation of each `thread_id` (tables `thread_messages`,
`thread_summaries`, `thread_state`).

`load` always returns a history the Chat Completions API accepts, whatever a crash or a `/stop` left
behind: a tool call without a result gets a synthetic "interrupted" result, stray results are dropped.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlalchemy import func, insert, select

from bot.store import Store, ThreadMessage, ThreadState, ThreadSummary, utcnow
from bot.store.direct import RowCodec

log = logging.getLogger(__name__)

INTERRUPTED_RESULT = "interrupted: the run stopped before this tool finished"

VISIBLE_KINDS = frozenset({"query", "interrupt", "answer"})
"""Message kinds `/thread show` lists; engine bookkeeping (JSON-mode steps, observations) is hidden."""


_MESSAGES = ThreadMessage.__table__
_ROW_COLUMNS = [
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
]
_LOAD_COLUMNS = (
    _MESSAGES.c.id,
    _MESSAGES.c.role,
    _MESSAGES.c.content,
    _MESSAGES.c.tool_calls,
    _MESSAGES.c.tool_call_id,
    _MESSAGES.c.name,
    _MESSAGES.c.pinned,
)


def _to_message(row: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": row.role, "content": row.content}
    if row.tool_calls:
        msg["tool_calls"] = row.tool_calls
    if row.tool_call_id:
        msg["tool_call_id"] = row.tool_call_id
    if row.name:
        msg["name"] = row.name
    if row.pinned:
        msg["pinned"] = True
    msg["_id"] = row.id
    return msg


def _row(
    thread_id: str, message: dict[str, Any], *, run_id: str | None, pinned: bool, kind: str | None
) -> dict[str, Any]:
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


def repair_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Make a stored history API-valid: close dangling tool calls, drop orphan or duplicate results."""
    out: list[dict[str, Any]] = []
    pending: dict[str, str] = {}
    seen: set[str] = set()

    def close_pending() -> None:
        for call_id in pending:
            out.append({"role": "tool", "tool_call_id": call_id, "content": INTERRUPTED_RESULT})
        pending.clear()

    for m in messages:
        role = m.get("role")
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id in pending:
                pending.pop(call_id)
                out.append(m)
            continue  # a result whose call is gone (reset, summary, duplicate) would be rejected
        if pending:
            close_pending()
        if role == "assistant" and m.get("tool_calls"):
            calls = []
            for tc in m["tool_calls"]:
                call_id = tc.get("id")
                if not call_id or call_id in seen:
                    continue
                seen.add(call_id)
                calls.append(tc)
                pending[call_id] = (tc.get("function") or {}).get("name", "")
            if not calls and not m.get("content"):
                continue
            m = {**m, "tool_calls": calls} if calls else {k: v for k, v in m.items() if k != "tool_calls"}
        elif role == "assistant" and not m.get("content"):
            continue
        out.append(m)
    close_pending()
    return out


class ThreadMemory:
    """Append-only storage of thread messages; loads start after the last `/thread reset` and summary."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._codec: RowCodec | None = None

    def _direct_codec(self) -> RowCodec | None:
        """On file SQLite: how rows are written and read on the loop thread (see `bot.store.direct`)."""
        direct = self._store.direct
        if direct is None:
            return None
        if self._codec is None or self._codec.dialect is not direct.dialect:
            self._codec = RowCodec(_MESSAGES, direct.dialect, _ROW_COLUMNS)
        return self._codec

    async def _reset_before(self, session: Any, thread_id: str) -> int:
        state = await session.get(ThreadState, thread_id)
        return state.reset_before_id if state else 0

    async def load(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread as OpenAI-format messages (with `pinned` and a private `_id`), oldest first."""
        codec = self._direct_codec()
        if codec is not None and self._store.direct is not None:
            summary_text, messages = await self._store.direct.read(
                lambda c: _load_direct(c, codec, thread_id)
            )
            if summary_text is not None:
                messages.insert(0, {"role": "user", "content": summary_text})
            return repair_history(messages)
        async with self._store.session() as s:
            reset_before = await self._reset_before(s, thread_id)
            summary = (
                await s.execute(
                    select(ThreadSummary)
                    .where(ThreadSummary.thread_id == thread_id, ThreadSummary.upto_message_id > reset_before)
                    .order_by(ThreadSummary.id.desc())
                    .limit(1)
                )
            ).scalar_one_or_none()
            start = max(reset_before, summary.upto_message_id if summary else 0)
            rows = (
                await s.execute(
                    select(*_LOAD_COLUMNS)
                    .where(_MESSAGES.c.thread_id == thread_id, _MESSAGES.c.id > start)
                    .order_by(_MESSAGES.c.id)
                )
            ).all()
            messages = [_to_message(r) for r in rows]
        if summary is not None:
            messages.insert(0, {"role": "user", "content": summary.summary})
        return repair_history(messages)

    async def append(
        self,
        thread_id: str,
        message: dict[str, Any],
        *,
        run_id: str | None = None,
        pinned: bool = False,
        kind: str | None = None,
    ) -> int:
        """Store one message; returns its id. `kind` (query, interrupt, answer, …) is kept in `meta`."""
        return (await self.append_many(thread_id, [message], run_id=run_id, pinned=pinned, kind=kind))[0]

    async def append_many(
        self,
        thread_id: str,
        messages: list[dict[str, Any]],
        *,
        run_id: str | None = None,
        pinned: bool = False,
        kind: str | None = None,
    ) -> list[int]:
        """Store several messages in one transaction (e.g. the tool results of one assistant message)."""
        return await self._insert(
            [_row(thread_id, m, run_id=run_id, pinned=pinned, kind=kind) for m in messages]
        )

    async def _insert(self, rows: list[dict[str, Any]]) -> list[int]:
        codec = self._direct_codec()
        if codec is not None and self._store.direct is not None:
            # One transaction on the loop thread: no driver-thread hop per statement and commit.
            return await self._store.direct.write(lambda c: _insert_direct(c, codec, rows))
        # Core inserts, not the ORM: this runs on every loop step and the unit of work costs more than the write.
        ids: list[int] = []
        async with self._store.engine.begin() as conn:
            for row in rows:
                result = await conn.execute(insert(_MESSAGES).values(**row))
                ids.append(int(result.inserted_primary_key[0]))
        return ids

    def writer(self, thread_id: str, *, run_id: str | None = None) -> ThreadWriter:
        """An ordered write-behind queue for one run (see `ThreadWriter`)."""
        return ThreadWriter(self, thread_id, run_id=run_id)

    async def append_assistant(self, thread_id: str, text: str, run_id: str | None = None) -> int:
        """The answer as delivered to the player (after synthesis and output guards)."""
        return await self.append(
            thread_id, {"role": "assistant", "content": text}, run_id=run_id, kind="answer"
        )

    async def save_summary(self, thread_id: str, upto_message_id: int, summary: str) -> None:
        """From now on `load` starts with `summary` (the text the model reads, as the engine wrote it)
        instead of the messages up to `upto_message_id`."""
        async with self._store.session() as s:
            s.add(ThreadSummary(thread_id=thread_id, upto_message_id=upto_message_id, summary=summary))
            await s.commit()

    async def recent(self, thread_id: str, limit: int = 20) -> list[ThreadMessage]:
        """The last `limit` user and assistant messages people wrote or read (for `/thread show`)."""
        async with self._store.session() as s:
            reset_before = await self._reset_before(s, thread_id)
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


def _insert_direct(conn: Any, codec: RowCodec, rows: list[dict[str, Any]]) -> list[int]:
    ids = []
    for row in rows:
        ids.append(int(conn.execute(codec.insert_sql, codec.params(row)).lastrowid))
    return ids


def _load_direct(conn: Any, codec: RowCodec, thread_id: str) -> tuple[str | None, list[dict[str, Any]]]:
    """`ThreadMemory.load`'s three reads on one snapshot: reset point, latest summary, the messages."""
    state = conn.execute(
        "SELECT reset_before_id FROM thread_state WHERE thread_id = ?", (thread_id,)
    ).fetchone()
    reset_before = state[0] if state else 0
    summary = conn.execute(
        "SELECT upto_message_id, summary FROM thread_summaries WHERE thread_id = ? AND upto_message_id > ? "
        "ORDER BY id DESC LIMIT 1",
        (thread_id, reset_before),
    ).fetchone()
    start = max(reset_before, summary[0] if summary else 0)
    tool_calls = codec.reader("tool_calls")
    messages = []
    for mid, role, content, calls, call_id, name, pinned in conn.execute(
        "SELECT id, role, content, tool_calls, tool_call_id, name, pinned FROM thread_messages "
        "WHERE thread_id = ? AND id > ? ORDER BY id",
        (thread_id, start),
    ):
        msg: dict[str, Any] = {"role": role, "content": content}
        calls = tool_calls(calls)
        if calls:
            msg["tool_calls"] = calls
        if call_id:
            msg["tool_call_id"] = call_id
        if name:
            msg["name"] = name
        if pinned:
            msg["pinned"] = True
        msg["_id"] = mid
        messages.append(msg)
    return (summary[1] if summary else None), messages


class ThreadWriter:
    """Persists one run's messages in order without making the loop wait for each commit.

    The loop hands a message over as it appends it and goes on; one background task writes them in
    order (the commit overlaps the next model call). `flush()` waits until everything handed over is
    stored and sets each message's `_id`; a write failure is raised from `flush()`/`close()`.
    """

    def __init__(self, memory: ThreadMemory, thread_id: str, *, run_id: str | None = None) -> None:
        self._memory = memory
        self._thread_id = thread_id
        self._run_id = run_id
        self._queue: asyncio.Queue[tuple[list[dict[str, Any]], str | None] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._error: BaseException | None = None

    def submit(self, messages: list[dict[str, Any]], *, kind: str | None = None) -> None:
        if not messages:
            return
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"thread-writer:{self._thread_id}")
        self._queue.put_nowait((messages, kind))

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            # Everything handed over while the previous commit ran goes into one transaction.
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                items = [item for item in batch if item is not None]
                if (
                    items and self._error is None
                ):  # after a failed write nothing more is stored: order matters
                    messages = [m for msgs, _kind in items for m in msgs]
                    rows = [
                        _row(self._thread_id, m, run_id=self._run_id, pinned=False, kind=kind)
                        for msgs, kind in items
                        for m in msgs
                    ]
                    ids = await self._memory._insert(rows)
                    for message, message_id in zip(messages, ids, strict=True):
                        message["_id"] = message_id
            except Exception as exc:  # surfaced by flush(); the run decides what to do
                log.exception("could not persist messages of thread %s", self._thread_id)
                self._error = exc
            finally:
                for _ in batch:
                    self._queue.task_done()
            if any(item is None for item in batch):
                return

    async def flush(self) -> None:
        """Wait until every submitted message is stored; raise the first write failure."""
        if self._task is not None and not self._task.done():
            await self._queue.join()
        if self._error is not None:
            raise self._error

    async def close(self) -> None:
        """Flush, then stop the background task."""
        try:
            await self.flush()
        finally:
            if self._task is not None and not self._task.done():
                self._queue.put_nowait(None)
                await self._task
