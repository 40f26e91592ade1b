"""What the staff console's pages read from the store: conversations, history, coupons, audit."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from bot.guards.fact_check import FACT_UNBACKED, FACT_WITHHELD
from bot.store import (
    AuditEntry,
    Coupon,
    Order,
    Store,
    ThreadMessage,
    audit_views,
    conversation_views,
    coupon_views,
)
from bot.store.audit_views import AuditQuery
from bot.store.coupon_views import CouponQuery
from bot.store.outbox import reply_statuses
from bot.web_kit.identity import Identity

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
    found = await conversation_views.latest_threads(
        conversations.store, limit=limit, offset=(max(page, 1) - 1) * limit, search=search
    )
    recorded = {t.thread_id: t.asker for t in found if t.asker is not None}
    rows = []
    for t in found:
        if conversations.is_running(t.thread_id):
            state = "answering"
        elif t.handed_off:
            state = "handed_off"
        elif t.escalated:
            state = "escalated"
        else:
            state = "waiting"
        rows.append(
            ConversationRow(
                thread_id=t.thread_id,
                state=state,
                player=_player_of(conversations, t.thread_id, recorded),
                last_role="staff" if (t.last.name or "").startswith("staff:") else t.last.role,
                last_message=(t.last.content or "")[:160],
                last_at=t.last.created_at,
                messages=t.messages,
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
    return max(0, await conversation_views.message_count(store, thread_id) - shown)


async def history(store: Store, thread_id: str, limit: int = HISTORY_LIMIT) -> list[ThreadMessage]:
    """Every message of the thread, tool calls and results included, oldest first."""
    return await conversation_views.latest_messages(store, thread_id, limit)


async def withheld_facts(store: Any, thread_id: str, limit: int = 200) -> dict[str, list[dict[str, Any]]]:
    """The fact check's replacements in the thread, by run id: what was withheld and what replaced it."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in await audit_views.thread_actions(
        store, thread_id, (FACT_WITHHELD, FACT_UNBACKED), limit=limit
    ):
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
    mark = await conversation_views.thread_mark(conversations.store, thread_id)
    return ThreadSignature(
        last_id=mark.last_id,
        messages=mark.messages,
        running=conversations.is_running(thread_id),
        handed_off=mark.handed_off,
        replies=tuple((r.reply.id, r.status) for r in await reply_statuses(conversations.store, thread_id)),
    )


async def is_handed_off(store: Store, thread_id: str) -> bool:
    return await conversation_views.is_handed_off(store, thread_id)


@dataclass
class CouponFilter:
    player: str = ""
    order: str = ""
    status: str = ""
    day: str = ""


async def coupons(
    store: Store, f: CouponFilter, timezone: str = "UTC", limit: int | None = PAGE_LIMIT, *, offset: int = 0
) -> list[tuple[Coupon, Order | None]]:
    start = day_start(f.day, timezone) if f.day else None
    query = CouponQuery(player=f.player, order=f.order.upper(), status=f.status, day_start=start)
    return await coupon_views.coupons_with_orders(store, query, limit=limit, offset=offset)


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
    asked = await coupon_views.issue_audits(store, list(dict.fromkeys(c.order_id for c, _ in reversed(rows))))
    out = []
    for c, o in reversed(rows):
        found = asked.get(c.order_id)
        thread = found.thread_id if found else None
        why = _json_object(found.detail) if found and found.code == "PENDING_APPROVAL" else {}
        out.append((c, o, thread, why))
    return out


@dataclass(frozen=True)
class OrderShown:
    """An order as an approval row shows it: read through the order source now (`live`), or — the
    game's backend not answering — the ledger's copy of the facts the coupon was decided on (`ledger`,
    read at `read_at`), or neither (`missing`)."""

    origin: str
    item: str | None = None
    status: str | None = None
    read_at: datetime | None = None


async def orders_shown(store: Store, source: Any, coupons: list[Coupon]) -> tuple[list[OrderShown], bool]:
    """How each coupon's order is shown, and whether the source could not be read for some of them.
    Through the order source (with `ARCA_ORDER_SOURCE=http` the embedded table is only a mirror), read
    fresh: staff decide on what the game holds now."""
    from bot.game.orders import SourceUnavailable
    from bot.store.game_order_facts import facts_of_coupons

    shown: list[OrderShown] = []
    unreadable = False
    copies: dict[str, Any] | None = None
    for c in coupons:
        try:
            order = await source.order(c.order_id, fresh=True) if source is not None else None
        except SourceUnavailable:
            unreadable = True
            if copies is None:
                copies = await facts_of_coupons(store, [x.code for x in coupons])
            copy = copies.get(c.code)
            shown.append(
                OrderShown("ledger", None, copy.status, copy.read_at) if copy else OrderShown("missing")
            )
            continue
        shown.append(OrderShown("live", order.item, order.status) if order else OrderShown("missing"))
    return shown, unreadable


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


def _audit_query(f: AuditFilter) -> AuditQuery:
    return AuditQuery(actor=f.actor, action=f.action, code=f.code)


async def audit_rows(
    store: Store, f: AuditFilter, limit: int = PAGE_LIMIT, *, offset: int = 0
) -> list[AuditEntry]:
    return await audit_views.audit_page(store, _audit_query(f), limit=limit, offset=offset)


AUDIT_HEADER = ["id", "at", "actor", "action", "thread_id", "target", "code", "detail"]
CSV_BATCH = 500


async def audit_csv(store: Store, f: AuditFilter) -> AsyncIterator[str]:
    """Every audit row of the filter as CSV text, newest first, `CSV_BATCH` rows per read (by id, so
    rows written meanwhile neither repeat nor shift a batch)."""
    yield to_csv(AUDIT_HEADER, [])
    before: int | None = None
    while True:
        batch = await audit_views.audit_page(store, _audit_query(f), limit=CSV_BATCH, before_id=before)
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
