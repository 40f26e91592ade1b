"""ThreadMemory: the conversation of each `thread_id` as the model reads it, stored through
`Store.threads`.

`load` always returns a history the Chat Completions API accepts, whatever a crash or a `/stop` left
behind: a tool call without a result gets a synthetic "interrupted" result, stray results are dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bot.store import Store, TableRows, ThreadMessage
from bot.store.threads import answer_rows, message_row

log = logging.getLogger(__name__)

INTERRUPTED_RESULT = "interrupted: the run stopped before this tool finished"


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


@dataclass(frozen=True, slots=True)
class _Held:
    """A thread's stored messages as the last load decoded them, and what they start from."""

    start: tuple[int, int, str | None]
    """The reset point, the summary's last message id and the summary's text."""
    messages: list[dict[str, Any]]
    derived: dict[int, Any] = field(default_factory=dict)
    """`load_with`'s derived values by stored message id (rows never change, so a value stays right)."""
    derive: Callable[[dict[str, Any]], Any] | None = None
    """The function `derived` came from."""


T = TypeVar("T")

HELD_THREADS = 256
"""Threads whose decoded messages a `ThreadMemory` keeps (the most recently loaded)."""


class ThreadMemory:
    """Append-only storage of thread messages; loads start after the last `/thread reset` and summary."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._held: OrderedDict[str, _Held] = OrderedDict()
        """Each recent thread's messages, decoded once: a load reads only the rows after the last one
        held (a thread's history was read and decoded whole before every run)."""

    async def load(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread as OpenAI-format messages (with `pinned` and a private `_id`), oldest first."""
        return (await self._load(thread_id, None))[0]

    async def load_with(
        self, thread_id: str, derive: Callable[[dict[str, Any]], T]
    ) -> tuple[list[dict[str, Any]], dict[int, tuple[dict[str, Any], T]]]:
        """`load`, and `derive` of each loaded message that is a stored row as it was stored, by the
        message's `id()` (with the message, which keeps the id from being reused). `derive` runs once per
        stored row while the thread is held: the engine keeps each message's API form and token estimate
        here, which every run used to rebuild for the whole history. It must depend on the row alone."""
        return await self._load(thread_id, derive)

    async def _load(
        self, thread_id: str, derive: Callable[[dict[str, Any]], Any] | None
    ) -> tuple[list[dict[str, Any]], dict[int, tuple[dict[str, Any], Any]]]:
        held = self._held.pop(thread_id, None)
        after = held.messages[-1]["_id"] if held is not None and held.messages else 0
        stored = await self._store.threads.load(thread_id, after=after)
        start = (stored.reset_point, stored.summary_upto, stored.summary)
        if (
            held is not None
            and held.start == start
            and stored.count == len(held.messages) + len(stored.messages)
        ):
            rows = held.messages + stored.messages
            derived = held.derived if held.derive is derive else {}
        else:
            # Another start (a reset, a summary), or a message below `after` that was committed after the
            # last load (PostgreSQL hands ids out before commit; rows are never changed or deleted, so the
            # count tells): read the thread whole.
            if after:
                stored = await self._store.threads.load(thread_id)
                start = (stored.reset_point, stored.summary_upto, stored.summary)
            rows = stored.messages
            derived = {}
        self._held[thread_id] = _Held(start, rows, derived, derive)
        while len(self._held) > HELD_THREADS:
            self._held.popitem(last=False)
        # Copies: the run adds to and rewrites its messages; the held ones stay as stored.
        copies = [{**m} for m in rows]
        messages = list(copies)
        if stored.summary is not None:
            messages.insert(0, {"role": "user", "content": stored.summary})
        repaired = repair_history(messages)
        values: dict[int, tuple[dict[str, Any], Any]] = {}
        if derive is not None:
            kept = {id(m) for m in repaired}
            for row, copy in zip(rows, copies, strict=True):
                if id(copy) not in kept:
                    continue  # dropped or rewritten by the repair
                value = derived.get(row["_id"])
                if value is None:
                    value = derived[row["_id"]] = derive(row)
                values[id(copy)] = (copy, value)
        return repaired, values

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
        return await self._store.threads.append(
            [message_row(thread_id, m, run_id=run_id, pinned=pinned, kind=kind) for m in messages]
        )

    def writer(self, thread_id: str, *, run_id: str | None = None) -> ThreadWriter:
        """An ordered write-behind queue for one run (see `ThreadWriter`)."""
        return ThreadWriter(self._store, thread_id, run_id=run_id)

    async def append_assistant(self, thread_id: str, text: str, run_id: str | None = None) -> int:
        """The answer as delivered to the player (after synthesis and output guards)."""
        return await self.append(
            thread_id, {"role": "assistant", "content": text}, run_id=run_id, kind="answer"
        )

    def answer_rows(self, thread_id: str, text: str, run_id: str | None = None) -> TableRows:
        """The row `append_assistant` would store, for a caller that writes it in its own transaction
        (`Store.insert_rows`: the run's answer with its analytics rows)."""
        return answer_rows(thread_id, text, run_id)

    async def save_summary(self, thread_id: str, upto_message_id: int, summary: str) -> None:
        """From now on `load` starts with `summary` (the text the model reads, as the engine wrote it)
        instead of the messages up to `upto_message_id`."""
        await self._store.threads.save_summary(thread_id, upto_message_id, summary)

    async def recent(self, thread_id: str, limit: int = 20) -> list[ThreadMessage]:
        """The last `limit` user and assistant messages people wrote or read (for `/thread show`)."""
        return await self._store.threads.recent(thread_id, limit)

    async def reset(self, thread_id: str) -> None:
        """Forget the conversation for the model (rows stay for audit); `/thread reset`."""
        await self._store.threads.reset(thread_id)


class ThreadWriter:
    """Persists one run's messages in order without making the loop wait for each commit.

    The loop hands a message over as it appends it and goes on; one background task writes them in
    order (the commit overlaps the next model call). `flush()` waits until everything handed over is
    stored and sets each message's `_id`; a write failure is raised from `flush()`/`close()`.
    """

    def __init__(self, store: Store, thread_id: str, *, run_id: str | None = None) -> None:
        self._store = store
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
                        message_row(self._thread_id, m, run_id=self._run_id, pinned=False, kind=kind)
                        for msgs, kind in items
                        for m in msgs
                    ]
                    ids = await self._store.threads.append(rows)
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
