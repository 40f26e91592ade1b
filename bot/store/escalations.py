"""Reading a conversation's escalation state: the one escalation still open for a thread, if any (what a
player's repeated request for a person is answered with, instead of a new ticket and a new SLA timer)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import or_, select

from bot.store.database import Store
from bot.store.models import AuditEntry, Escalation


@dataclass(frozen=True)
class EscalationState:
    """A thread's newest escalation (None: it never had one) and whether it is still open."""

    latest: int | None
    open: bool


async def escalation_state(
    store: Store, thread_id: str, *, ending_actions: Sequence[str], closed_action: str
) -> EscalationState:
    """Read once: the thread's newest escalation, open while there is no `ending_actions` audit on the
    thread since it was made (the thread handed back to the bot) and no `closed_action` audit naming it
    (auto-closed)."""
    async with store.session() as s:
        latest = (
            await s.execute(
                select(Escalation.id, Escalation.created_at)
                .where(Escalation.thread_id == thread_id)
                .order_by(Escalation.id.desc())
                .limit(1)
            )
        ).first()
        if latest is None:
            return EscalationState(None, False)
        ended = (
            await s.execute(
                select(AuditEntry.id)
                .where(
                    or_(
                        (AuditEntry.thread_id == thread_id)
                        & AuditEntry.action.in_(list(ending_actions))
                        & (AuditEntry.at >= latest.created_at),
                        (AuditEntry.action == closed_action)
                        & (AuditEntry.target == f"escalation:{latest.id}"),
                    )
                )
                .limit(1)
            )
        ).first()
    return EscalationState(int(latest.id), ended is None)


async def escalations_by_id(store: Store, ids: set[int]) -> dict[int, Escalation]:
    """The escalation rows of `ids` that exist."""
    if not ids:
        return {}
    async with store.session() as s:
        return {
            e.id: e for e in (await s.execute(select(Escalation).where(Escalation.id.in_(ids)))).scalars()
        }


@dataclass(frozen=True)
class EscalationMade:
    """An escalation's id, thread and creation time."""

    id: int
    thread_id: str | None
    created_at: datetime


async def escalations_between(store: Store, *, since: datetime, until: datetime) -> list[EscalationMade]:
    """Escalations created in [since, until), oldest first."""
    async with store.session() as s:
        rows = (
            await s.execute(
                select(Escalation.id, Escalation.thread_id, Escalation.created_at)
                .where(Escalation.created_at >= since, Escalation.created_at < until)
                .order_by(Escalation.created_at)
            )
        ).all()
    return [EscalationMade(r.id, r.thread_id, r.created_at) for r in rows]
