"""What the staff console's pages read from the store: conversations, history, coupons, audit."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from bot.guards.fact_check import FACT_UNBACKED, FACT_WITHHELD
from bot.players.web.widget.identity import Identity
from bot.store import AuditEntry, Coupon, Escalation, Order, Run, Store, ThreadMessage, ThreadState
from bot.store.outbox import reply_statuses

PAGE_LIMIT = 200


@dataclass
class ConversationRow:
    thread_id: str
    state: str
    """`answering`, `handed_off`, `escalated` or `waiting`."""
    player: str
    last_role: str
    last_message: str
    last_at: datetime | None
    messages: int


async def conversation_rows(
    conversations: Any, limit: int = PAGE_LIMIT, *, page: int = 1, search: str = ""
) -> list[ConversationRow]:
    """Threads with messages, most recent first, with their state, player and last message: page `page`
    of `limit` rows, only threads whose id or player contains `search` when it is given."""
    store = conversations.store
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
                .offset((max(page, 1) - 1) * limit)
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
        paused = {
            t
            for (t,) in (
                await s.execute(
                    select(ThreadState.thread_id).where(
                        ThreadState.thread_id.in_(threads), ThreadState.handoff.is_(True)
                    )
                )
            ).all()
        }
        escalated = {
            t
            for (t,) in (
                await s.execute(
                    select(Escalation.thread_id).where(
                        Escalation.thread_id.in_(threads), Escalation.status == "open"
                    )
                )
            ).all()
        }
        players: dict[str, str] = {}
        for t, p in (
            await s.execute(
                select(Run.thread_id, Run.player).where(Run.thread_id.in_(threads)).order_by(Run.started_at)
            )
        ).all():
            players[t] = p
    rows = []
    for thread_id, last_id, count in latest:
        msg = last[last_id]
        if conversations.is_running(thread_id):
            state = "answering"
        elif thread_id in paused:
            state = "handed_off"
        elif thread_id in escalated:
            state = "escalated"
        else:
            state = "waiting"
        rows.append(
            ConversationRow(
                thread_id=thread_id,
                state=state,
                player=_player_of(conversations, thread_id, players),
                last_role="staff" if (msg.name or "").startswith("staff:") else msg.role,
                last_message=(msg.content or "")[:160],
                last_at=msg.created_at,
                messages=int(count),
            )
        )
    return rows


def _player_of(conversations: Any, thread_id: str, recorded: dict[str, str]) -> str:
    """Who the conversation is with: the latest asker this process saw, else the latest recorded run's,
    else the web identity the thread belongs to; shown from the first message on, not the first answer."""
    found = conversations.asker_of(thread_id) or recorded.get(thread_id)
    if found:
        return found
    identity = Identity.of_thread(thread_id)
    return identity.actor.label if identity is not None else "-"


HISTORY_LIMIT = 500


async def earlier_messages(store: Store, thread_id: str, shown: int) -> int:
    """How many of the thread's messages come before the `shown` latest ones (the page says so)."""
    async with store.session() as s:
        total = (
            await s.execute(
                select(func.count()).select_from(ThreadMessage).where(ThreadMessage.thread_id == thread_id)
            )
        ).scalar_one()
    return max(0, int(total) - shown)


async def history(store: Store, thread_id: str, limit: int = HISTORY_LIMIT) -> list[ThreadMessage]:
    """Every message of the thread, tool calls and results included, oldest first."""
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


async def withheld_facts(store: Any, thread_id: str, limit: int = 200) -> dict[str, list[dict[str, Any]]]:
    """The fact check's replacements in the thread, by run id: what was withheld and what replaced it."""
    async with store.session() as s:
        rows = (
            await s.execute(
                select(AuditEntry)
                .where(
                    AuditEntry.thread_id == thread_id,
                    AuditEntry.action.in_((FACT_WITHHELD, FACT_UNBACKED)),
                )
                .order_by(AuditEntry.id)
                .limit(limit)
            )
        ).scalars()
        out: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            try:
                detail = json.loads(row.detail or "{}")
            except ValueError:
                continue
            if isinstance(detail, dict) and row.target:
                out.setdefault(row.target, []).append(detail)
    return out


@dataclass(frozen=True)
class ThreadSignature:
    """What changes when a conversation's page must be redrawn: its messages and its state."""

    last_id: int
    messages: int
    running: bool
    handed_off: bool
    replies: tuple[tuple[int, str], ...] = ()
    """(outbox id, `pending` / `delivered` / `expired`) of the thread's staff replies."""


async def thread_signature(conversations: Any, thread_id: str) -> ThreadSignature:
    async with conversations.store.session() as s:
        last_id, count = (
            await s.execute(
                select(func.max(ThreadMessage.id), func.count(ThreadMessage.id)).where(
                    ThreadMessage.thread_id == thread_id
                )
            )
        ).one()
        row = await s.get(ThreadState, thread_id)
    return ThreadSignature(
        last_id=int(last_id or 0),
        messages=int(count),
        running=conversations.is_running(thread_id),
        handed_off=bool(row and row.handoff),
        replies=tuple((r.reply.id, r.status) for r in await reply_statuses(conversations.store, thread_id)),
    )


async def is_handed_off(store: Store, thread_id: str) -> bool:
    async with store.session() as s:
        row = await s.get(ThreadState, thread_id)
        return bool(row and row.handoff)


@dataclass
class CouponFilter:
    player: str = ""
    order: str = ""
    status: str = ""
    day: str = ""


async def coupons(
    store: Store, f: CouponFilter, timezone: str = "UTC", limit: int | None = PAGE_LIMIT, *, offset: int = 0
) -> list[tuple[Coupon, Order | None]]:
    query = select(Coupon, Order).join(Order, Order.id == Coupon.order_id, isouter=True)
    if f.player:
        query = query.where(Coupon.player_id == f.player)
    if f.order:
        query = query.where(Coupon.order_id == f.order.upper())
    if f.status:
        query = query.where(Coupon.status == f.status)
    if f.day:
        start = day_start(f.day, timezone)
        if start is not None:
            query = query.where(Coupon.created_at >= start, Coupon.created_at < start + timedelta(days=1))
    query = query.order_by(Coupon.id.desc()).limit(limit).offset(offset)
    async with store.session() as s:
        return [(c, o) for c, o in (await s.execute(query)).all()]


def day_start(day: str, timezone: str) -> datetime | None:
    """The start of `day` (YYYY-MM-DD, years 2000-2100) in `timezone`, in UTC; None for anything else
    (0001-01-01 would overflow the time zone arithmetic)."""
    from zoneinfo import ZoneInfo

    try:
        d = date.fromisoformat(day)
    except ValueError:
        return None
    if not 2000 <= d.year <= 2100:
        return None
    return datetime(d.year, d.month, d.day, tzinfo=ZoneInfo(timezone)).astimezone(UTC)


async def pending_coupons(store: Store) -> list[tuple[Coupon, Order | None, str | None, dict[str, Any]]]:
    """Pending coupons, oldest first, with the order, the thread that asked and why it waits (the rule
    the issuance recorded: `{"review": …}` or `{"threshold": N}`), from the audit."""
    rows = await coupons(store, CouponFilter(status="pending"))
    out = []
    async with store.session() as s:
        for c, o in reversed(rows):
            asked = (
                await s.execute(
                    select(AuditEntry.thread_id, AuditEntry.detail, AuditEntry.code)
                    .where(AuditEntry.target == c.order_id, AuditEntry.action == "coupon.issue")
                    .order_by(AuditEntry.id.desc())
                    .limit(1)
                )
            ).one_or_none()
            thread = asked.thread_id if asked else None
            why = _json_object(asked.detail) if asked and asked.code == "PENDING_APPROVAL" else {}
            out.append((c, o, thread, why))
    return out


def _json_object(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


@dataclass
class AuditFilter:
    actor: str = ""
    action: str = ""
    code: str = ""


def _audit_query(f: AuditFilter) -> Any:
    query = select(AuditEntry)
    if f.actor:
        query = query.where(AuditEntry.actor.contains(f.actor, autoescape=True))
    if f.action:
        query = query.where(AuditEntry.action.contains(f.action, autoescape=True))
    if f.code:
        query = query.where(AuditEntry.code == f.code)
    return query


async def audit_rows(
    store: Store, f: AuditFilter, limit: int = PAGE_LIMIT, *, offset: int = 0
) -> list[AuditEntry]:
    async with store.session() as s:
        query = _audit_query(f).order_by(AuditEntry.id.desc()).limit(limit).offset(offset)
        return list((await s.execute(query)).scalars())


AUDIT_HEADER = ["id", "at", "actor", "action", "thread_id", "target", "code", "detail"]
CSV_BATCH = 500


async def audit_csv(store: Store, f: AuditFilter) -> AsyncIterator[str]:
    """Every audit row of the filter as CSV text, newest first, `CSV_BATCH` rows per read (by id, so
    rows written meanwhile neither repeat nor shift a batch)."""
    yield to_csv(AUDIT_HEADER, [])
    before: int | None = None
    while True:
        query = _audit_query(f)
        if before is not None:
            query = query.where(AuditEntry.id < before)
        async with store.session() as s:
            batch = list((await s.execute(query.order_by(AuditEntry.id.desc()).limit(CSV_BATCH))).scalars())
        if not batch:
            return
        rows = [[r.id, r.at, r.actor, r.action, r.thread_id, r.target, r.code, r.detail] for r in batch]
        yield to_csv(None, rows)
        before = batch[-1].id


def _cell(value: Any) -> str:
    """A CSV cell that a spreadsheet will not run as a formula."""
    text = "" if value is None else value.isoformat() if isinstance(value, datetime) else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def to_csv(header: list[str] | None, rows: list[list[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    if header is not None:
        writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(v) for v in row])
    return buf.getvalue()
