"""What the fact check recorded in a replayed case's store: how many sentences it let through unbacked
(observing) or withheld, and, observing, the answer as enforcing would have delivered it — so one live
sitting grades both settings on the same runs."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func, select

from bot.guards.fact_check import FACT_UNBACKED, FACT_WITHHELD
from bot.store import AuditEntry, Store


async def last_audit_id(store: Store) -> int:
    async with store.session() as s:
        return (await s.execute(select(func.max(AuditEntry.id)))).scalar() or 0


async def unbacked_details(store: Store, *, after_id: int) -> list[dict[str, Any]]:
    """What the observing fact check found since audit row `after_id`: each sentence let through and
    what enforcing would have put in its place."""
    async with store.session() as s:
        rows = (
            await s.execute(
                select(AuditEntry.detail)
                .where(AuditEntry.id > after_id, AuditEntry.action == FACT_UNBACKED)
                .order_by(AuditEntry.id)
            )
        ).scalars()
        return [json.loads(d) for d in rows if d]


def would_deliver(answer: str | None, details: list[dict[str, Any]]) -> str | None:
    """`answer` as the enforcing fact check would have delivered it: each unbacked sentence replaced (or
    dropped, where enforcing writes nothing in its place). The run is the same either way: the check
    reads the finished answer and never talks back to the model, so one run grades both settings."""
    if answer is None:
        return None
    for d in details:
        removed = d.get("removed") or ""
        if removed and removed in answer:
            answer = answer.replace(removed, (d.get("replacement") or "").strip(), 1)
    return answer


async def fact_counts(store: Store) -> tuple[int, int]:
    """(sentences delivered with an unbacked fact, sentences withheld) in this case's audit log."""
    async with store.session() as s:
        rows = (
            await s.execute(
                select(AuditEntry.action, func.count())
                .where(AuditEntry.action.in_((FACT_UNBACKED, FACT_WITHHELD)))
                .group_by(AuditEntry.action)
            )
        ).all()
    counts = dict(rows)
    return counts.get(FACT_UNBACKED, 0), counts.get(FACT_WITHHELD, 0)
