"""Reading a conversation's escalation state: the one escalation still open for a thread, if any (what a
player's repeated request for a person is answered with, instead of a new ticket and a new SLA timer)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError

from bot.store.database import Store
from bot.store.models import AuditEntry, Escalation
from bot.store.units import is_unique_violation

CLOSED_ACTION = "escalation.closed"
"""The audit action that closes an escalation (the desk's auto-close writes it; naming it here lets every
path that opens an escalation read the same state)."""


@dataclass(frozen=True)
class EscalationState:
    """A thread's newest escalation (None: it never had one) and whether it is still open."""

    latest: int | None
    open: bool


async def escalation_state(
    store: Store, thread_id: str, *, ending_actions: Sequence[str], closed_action: str = CLOSED_ACTION
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


@dataclass(frozen=True)
class NewEscalation:
    """What a player's request for a person records."""

    thread_id: str | None
    player_id: str | None
    discord_id: str | None
    summary: str
    idempotency_key: str
    created_at: datetime
    actor: str
    """Who asked, as the audit names them."""


async def open_escalation(store: Store, new: NewEscalation, *, audit_code: str) -> tuple[Escalation, bool]:
    """Record the escalation once per idempotency key, audited (`escalate`) in the same transaction:
    (the row, True) when this call made it; (the earlier or the concurrently winning row, False) when
    its key was already used."""
    key = new.idempotency_key
    async with store.session() as session:
        existing = (
            await session.execute(select(Escalation).where(Escalation.idempotency_key == key))
        ).scalar_one_or_none()
        if existing is not None:
            return existing, False
        row = Escalation(
            thread_id=new.thread_id,
            player_id=new.player_id,
            discord_id=new.discord_id,
            summary=new.summary,
            status="open",
            idempotency_key=key,
            created_at=new.created_at,
        )
        session.add(row)
        try:
            await session.flush()
            await store.audit(
                actor=new.actor,
                action="escalate",
                thread_id=new.thread_id,
                target=f"escalation:{row.id}",
                code=audit_code,
                detail={"summary": new.summary},
                session=session,
            )
            await session.commit()
        except IntegrityError as exc:
            await session.rollback()
            if not is_unique_violation(exc):
                raise
            # The same call ran concurrently and won: answer with its record.
            winner = (
                await session.execute(select(Escalation).where(Escalation.idempotency_key == key))
            ).scalar_one()
            return winner, False
    return row, True
