"""Reading the audit log: filtered pages and batches for the console, the rows of given actions in a
thread or a time window, the counts replay grades with. Writing stays `Store.audit`, and
`audit_in_session` for a row the coupon ledger writes inside its locked session, with its own time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from bot.store.database import Store, StoreSession
from bot.store.models import AuditEntry


@dataclass(frozen=True)
class AuditQuery:
    """Which audit rows a page asks for: `actor` and `action` match a part, `code` exactly; empty: any."""

    actor: str = ""
    action: str = ""
    code: str = ""


def _filtered(q: AuditQuery) -> Any:
    query = select(AuditEntry)
    if q.actor:
        query = query.where(AuditEntry.actor.contains(q.actor, autoescape=True))
    if q.action:
        query = query.where(AuditEntry.action.contains(q.action, autoescape=True))
    if q.code:
        query = query.where(AuditEntry.code == q.code)
    return query


async def audit_page(
    store: Store, q: AuditQuery, *, limit: int | None, offset: int = 0, before_id: int | None = None
) -> list[AuditEntry]:
    """The rows of `q`, newest first, `limit` from `offset`; only ids below `before_id` when given."""
    query = _filtered(q)
    if before_id is not None:
        query = query.where(AuditEntry.id < before_id)
    async with store.session() as s:
        return list(
            (await s.execute(query.order_by(AuditEntry.id.desc()).limit(limit).offset(offset))).scalars()
        )


async def thread_actions(
    store: Store, thread_id: str, actions: Sequence[str], *, limit: int
) -> list[AuditEntry]:
    """The thread's rows of `actions`, oldest first, at most `limit`."""
    async with store.session() as s:
        return list(
            (
                await s.execute(
                    select(AuditEntry)
                    .where(AuditEntry.thread_id == thread_id, AuditEntry.action.in_(list(actions)))
                    .order_by(AuditEntry.id)
                    .limit(limit)
                )
            ).scalars()
        )


async def recent_of_action(
    store: Store, action: str, *, since: datetime, limit: int
) -> tuple[list[AuditEntry], int]:
    """The newest `limit` rows of `action` at `since` or later, and how many such rows there are in all."""
    window = (AuditEntry.action == action, AuditEntry.at >= since)
    async with store.session() as s:
        rows = list(
            (
                await s.execute(select(AuditEntry).where(*window).order_by(AuditEntry.id.desc()).limit(limit))
            ).scalars()
        )
        total = (await s.execute(select(func.count()).select_from(AuditEntry).where(*window))).scalar_one()
    return rows, int(total)


async def targets_and_codes(
    store: Store, action: str, *, since: datetime
) -> set[tuple[str | None, str | None]]:
    """(target, code) of every row of `action` at `since` or later."""
    async with store.session() as s:
        rows = await s.execute(
            select(AuditEntry.target, AuditEntry.code).where(
                AuditEntry.action == action, AuditEntry.at >= since
            )
        )
        return {(target, code) for target, code in rows.all()}


async def targets_of(store: Store, action: str) -> set[str]:
    """The targets of every row of `action`."""
    async with store.session() as s:
        rows = await s.execute(select(AuditEntry.target).where(AuditEntry.action == action))
        return {str(t) for t in rows.scalars()}


async def count_in_thread(
    store: Store, thread_id: str, action: str, *, since: datetime, until: datetime
) -> int:
    """How many rows of `action` the thread got from `since` to `until` (both included)."""
    async with store.session() as s:
        return int(
            (
                await s.execute(
                    select(func.count())
                    .select_from(AuditEntry)
                    .where(
                        AuditEntry.thread_id == thread_id,
                        AuditEntry.action == action,
                        AuditEntry.at >= since,
                        AuditEntry.at <= until,
                    )
                )
            ).scalar_one()
        )


async def last_audit_id(store: Store) -> int:
    """The newest audit row's id (0 for an empty log)."""
    async with store.session() as s:
        return (await s.execute(select(func.max(AuditEntry.id)))).scalar() or 0


async def actions_after(store: Store, after_id: int, actions: Sequence[str]) -> list[tuple[str, str | None]]:
    """(action, detail) of the rows of `actions` after row `after_id`, oldest first."""
    async with store.session() as s:
        rows = (
            await s.execute(
                select(AuditEntry.action, AuditEntry.detail)
                .where(AuditEntry.id > after_id, AuditEntry.action.in_(list(actions)))
                .order_by(AuditEntry.id)
            )
        ).all()
    return [(a, d) for a, d in rows]


async def action_counts(store: Store, actions: Sequence[str]) -> dict[str, int]:
    """How many rows each of `actions` has (an action without rows is left out)."""
    async with store.session() as s:
        rows = (
            await s.execute(
                select(AuditEntry.action, func.count())
                .where(AuditEntry.action.in_(list(actions)))
                .group_by(AuditEntry.action)
            )
        ).all()
    return {a: int(n) for a, n in rows}


@dataclass(frozen=True)
class ThreadAction:
    """One audited action on a thread, and when."""

    thread_id: str | None
    action: str
    at: datetime


async def actions_in_threads(
    store: Store, threads: Sequence[str], actions: Sequence[str], *, since: datetime
) -> list[ThreadAction]:
    """The rows of `actions` on `threads` at `since` or later, oldest first (none for no threads)."""
    if not threads:
        return []
    async with store.session() as s:
        rows = (
            await s.execute(
                select(AuditEntry.thread_id, AuditEntry.action, AuditEntry.at)
                .where(
                    AuditEntry.thread_id.in_(list(threads)),
                    AuditEntry.action.in_(list(actions)),
                    AuditEntry.at >= since,
                )
                .order_by(AuditEntry.at)
            )
        ).all()
    return [ThreadAction(t, a, at) for t, a, at in rows]


async def audit_in_session(session: StoreSession, row: dict[str, Any]) -> None:
    """Append one audit row (`AUDIT_COLUMNS`, `at` included) inside the caller's transaction."""
    await session.execute(AuditEntry.__table__.insert(), row)
