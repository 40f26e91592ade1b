"""What the fact check recorded in a replayed case's store: how many sentences it let through unbacked
(observing) or withheld, and, observing, the answer as enforcing would have delivered it — so one live
sitting grades both settings on the same runs."""

from __future__ import annotations

import json
from typing import Any

from bot.guards.fact_check import FACT_UNBACKED, FACT_WITHHELD
from bot.store import Store, audit_views


async def last_audit_id(store: Store) -> int:
    return await audit_views.last_audit_id(store)


async def unbacked_details(store: Store, *, after_id: int) -> list[dict[str, Any]]:
    """What the observing fact check found since audit row `after_id`: each sentence let through and
    what enforcing would have put in its place."""
    return [json.loads(d) for _, d in await audit_views.actions_after(store, after_id, (FACT_UNBACKED,)) if d]


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
    counts = await audit_views.action_counts(store, (FACT_UNBACKED, FACT_WITHHELD))
    return counts.get(FACT_UNBACKED, 0), counts.get(FACT_WITHHELD, 0)
