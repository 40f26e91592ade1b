"""Reading a conversation's escalation state: the one escalation still open for a thread, if any (what a
player's repeated request for a person is answered with, instead of a new ticket and a new SLA timer)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import or_, select

from bot.store.database import Store
from bot.store.models import AuditEntry, Escalation

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
