"""The staff outbox: replies typed in the console, posted by whichever channel process owns the thread.

The console (any process) writes a row; each channel process polls the rows of the threads it owns and
claims a row with a conditional UPDATE before posting it, so two processes never both post one reply.
A failed post gives the claim back and the next poll tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select, update

from bot.store.database import Store
from bot.store.models import StaffOutbox, utcnow

log = logging.getLogger(__name__)

_OUTBOX = StaffOutbox.__table__


@dataclass(frozen=True)
class OutboxReply:
    id: int
    thread_id: str
    staff: str
    text: str
    created_at: datetime


async def enqueue_reply(store: Store, thread_id: str, staff: str, text: str) -> int:
    """Queue a staff reply for the player's channel; returns the row id."""
    async with store.session() as session, session.begin():
        result = await session.execute(
            insert(_OUTBOX).values(thread_id=thread_id, staff=staff, text=text, created_at=utcnow())
        )
        return int(result.inserted_primary_key[0])


async def pending_replies(store: Store, prefix: str, limit: int = 50) -> list[OutboxReply]:
    """Undelivered replies of threads whose id starts with `prefix`, oldest first."""
    async with store.session() as session:
        rows = await session.execute(
            select(_OUTBOX)
            .where(_OUTBOX.c.delivered_at.is_(None), _OUTBOX.c.thread_id.startswith(prefix, autoescape=True))
            .order_by(_OUTBOX.c.id)
            .limit(limit)
        )
        return [OutboxReply(r.id, r.thread_id, r.staff, r.text, r.created_at) for r in rows]


async def claim_reply(store: Store, reply_id: int) -> bool:
    """Mark a reply delivered; True only for the one caller whose UPDATE changed the row."""
    async with store.session() as session, session.begin():
        result = await session.execute(
            update(_OUTBOX)
            .where(_OUTBOX.c.id == reply_id, _OUTBOX.c.delivered_at.is_(None))
            .values(delivered_at=utcnow())
        )
        return result.rowcount == 1


async def release_reply(store: Store, reply_id: int) -> None:
    """Give a claim back after a failed post, so a later poll posts it."""
    async with store.session() as session, session.begin():
        await session.execute(update(_OUTBOX).where(_OUTBOX.c.id == reply_id).values(delivered_at=None))


class OutboxPoller:
    """Posts the outbox rows of the threads one channel process owns, every `interval` seconds."""

    def __init__(
        self,
        store: Store,
        prefix: str,
        deliver: Callable[[OutboxReply], Awaitable[None]],
        *,
        owns: Callable[[str], bool] = lambda _thread_id: True,
        interval: float = 1.0,
    ) -> None:
        self.store = store
        self.prefix = prefix
        self.deliver = deliver
        self.owns = owns
        self.interval = interval
        self._task: asyncio.Task[None] | None = None

    async def deliver_pending(self) -> int:
        """One pass: claim and post every pending reply this process owns; returns how many it posted."""
        posted = 0
        for reply in await pending_replies(self.store, self.prefix):
            if not self.owns(reply.thread_id) or not await claim_reply(self.store, reply.id):
                continue
            try:
                await self.deliver(reply)
            except Exception:
                log.exception("staff outbox: posting reply %s to %s failed", reply.id, reply.thread_id)
                await release_reply(self.store, reply.id)
                continue
            posted += 1
        return posted

    async def _run(self) -> None:
        while True:
            try:
                await self.deliver_pending()
            except Exception:  # the store may be briefly unavailable; the next pass retries
                log.exception("staff outbox: poll failed")
            await asyncio.sleep(self.interval)

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name=f"staff-outbox:{self.prefix}")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
