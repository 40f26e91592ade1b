"""The staff outbox: replies typed in the console, posted by whichever channel process owns the thread.

The console (any process) writes a row; each channel process polls the rows of the threads it owns and
claims a row with a conditional UPDATE before posting it, so two processes never both post one reply.
A failed post gives the claim back and the next poll tries again.

A reply nobody posts within `REPLY_TTL` (a `dm:` thread, a channel no running process sees, an owner
that is down) is given up: the same conditional UPDATE takes it off the queue, so it is never posted
late, and an audit row `console.reply_expired` (code `EXPIRED`) records it; the console shows it as
not delivered. `delivered_at` is therefore when a row left the queue; that audit row tells a given-up
row from a posted one (`reply_statuses`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert, select, update

from bot.periodic import Periodic
from bot.store.database import Store
from bot.store.models import AuditEntry, StaffOutbox, StaffSession, ThreadMessage, utcnow
from bot.store.threads import MESSAGE_COLUMNS
from bot.store.units import Insert, Unit

log = logging.getLogger(__name__)

_OUTBOX = StaffOutbox.__table__
_OUTBOX_COLUMNS = ("thread_id", "staff", "text", "created_at")
_MESSAGES = ThreadMessage.__table__
REPLY_TTL = timedelta(minutes=15)
"""A staff reply not posted within this is given up and shown as not delivered."""
EXPIRED_ACTION = "console.reply_expired"


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


async def keep_and_queue_reply(store: Store, message: dict[str, Any], staff: str) -> tuple[int, int]:
    """Store a staff reply's thread message (a `bot.store.threads.message_row`) and queue its text for
    the player's channel signed `staff`, in one transaction: a reply is never kept in the history the
    player and the bot read without being queued, nor queued without being kept. Returns the message's
    id and the outbox row's."""

    def unit() -> Unit[tuple[int, int]]:
        [message_id] = yield Insert(_MESSAGES, MESSAGE_COLUMNS, [message], ids=True)
        queued = {"thread_id": message["thread_id"], "staff": staff, "text": message["content"]}
        [reply_id] = yield Insert(_OUTBOX, _OUTBOX_COLUMNS, [{**queued, "created_at": utcnow()}], ids=True)
        return int(message_id), int(reply_id)

    return await store.run(unit, write=True)


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


async def expire_replies(store: Store, older_than: datetime) -> list[OutboxReply]:
    """Give up on every pending reply (any channel) queued before `older_than`: each leaves the queue
    exactly once (a conditional UPDATE, as a claim) with its audit row in the same transaction."""
    async with store.session() as session:
        rows = await session.execute(
            select(_OUTBOX)
            .where(_OUTBOX.c.delivered_at.is_(None), _OUTBOX.c.created_at < older_than)
            .order_by(_OUTBOX.c.id)
            .limit(200)
        )
        stale = [OutboxReply(r.id, r.thread_id, r.staff, r.text, r.created_at) for r in rows]
    expired = []
    for reply in stale:
        async with store.session() as session, session.begin():
            taken = await session.execute(
                update(_OUTBOX)
                .where(_OUTBOX.c.id == reply.id, _OUTBOX.c.delivered_at.is_(None))
                .values(delivered_at=utcnow())
            )
            if taken.rowcount != 1:
                continue  # posted (or given up) by another process meanwhile
            await store.audit(
                actor="system:staff-outbox",
                action=EXPIRED_ACTION,
                thread_id=reply.thread_id,
                target=f"outbox:{reply.id}",
                code="EXPIRED",
                detail={"staff": reply.staff, "chars": len(reply.text), "queued_at": reply.created_at},
                session=session,
            )
        log.warning("staff outbox: reply %s to %s was not delivered in time", reply.id, reply.thread_id)
        expired.append(reply)
    return expired


@dataclass(frozen=True)
class ReplyStatus:
    reply: OutboxReply
    status: str
    """`pending`, `delivered` or `expired` (not delivered)."""


async def reply_statuses(store: Store, thread_id: str, limit: int = 50) -> list[ReplyStatus]:
    """The thread's staff replies, oldest first, with where each stands."""
    async with store.session() as session:
        rows = list(
            await session.execute(
                select(_OUTBOX)
                .where(_OUTBOX.c.thread_id == thread_id)
                .order_by(_OUTBOX.c.id.desc())
                .limit(limit)
            )
        )
        targets = [f"outbox:{r.id}" for r in rows]
        expired = set(
            (
                await session.execute(
                    select(AuditEntry.target).where(
                        AuditEntry.action == EXPIRED_ACTION, AuditEntry.target.in_(targets)
                    )
                )
            ).scalars()
        )
    out = []
    for r in reversed(rows):
        status = (
            "pending" if r.delivered_at is None else "expired" if f"outbox:{r.id}" in expired else "delivered"
        )
        out.append(ReplyStatus(OutboxReply(r.id, r.thread_id, r.staff, r.text, r.created_at), status))
    return out


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
        expire_after: timedelta | None = None,
    ) -> None:
        self.store = store
        self.prefix = prefix
        self.deliver = deliver
        self.owns = owns
        self.interval = interval
        self.expire_after = expire_after
        """When set, each pass also gives up on every channel's replies older than this."""
        self._periodic = Periodic(
            self.deliver_pending,
            interval,
            name=f"staff-outbox:{prefix}",
            log=log,
            failure="staff outbox: poll failed",
        )

    async def deliver_pending(self) -> int:
        """One pass: claim and post every pending reply this process owns; returns how many it posted."""
        posted = 0
        if self.expire_after is not None:
            await expire_replies(self.store, utcnow() - self.expire_after)
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

    def start(self) -> None:
        self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()


async def staff_names(store: Store, staff_ids: set[str]) -> dict[str, str]:
    """The name each staff member last signed in to the console with (what their replies are signed
    with), by `staff_id`; ids never signed in are left out."""
    if not staff_ids:
        return {}
    async with store.session() as session:
        rows = await session.execute(
            select(StaffSession.staff_id, StaffSession.staff_name)
            .where(StaffSession.staff_id.in_(sorted(staff_ids)))
            .order_by(StaffSession.id)
        )
        return {staff_id: name for staff_id, name in rows}
