"""Writing the facts analytics reads: one `runs` row per delivered answer, its tool calls
with their result codes, the policy sections its `search_policy` calls returned, and the questions no
policy answered (bot/store/policy_gaps.py).

Recording never breaks an answer: a failed write is logged and the player still has the reply.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from bot.store import Store, TableRows
from bot.store.policy_gaps import GapRecord
from bot.store.run_records import add_run

log = logging.getLogger(__name__)

POLICY_TOOL = "search_policy"
ESCALATE_TOOL = "escalate_to_staff"


def policy_gaps_of(
    outcomes: list[Any], *, run_id: str, thread_id: str, player: str, at: datetime
) -> list[GapRecord]:
    """The questions of a run no policy answered: each `search_policy` call that found nothing, and an
    escalation after one (its reason is the missing rule)."""
    unanswered = [
        str((o.result.data or {}).get("query") or "")
        for o in outcomes
        if getattr(o, "name", None) == POLICY_TOOL
        and o.result.ok
        and isinstance(o.result.data, dict)
        and o.result.data.get("hits") == []
    ]
    gaps = [GapRecord("abstained", q, thread_id, at, run_id, player) for q in dict.fromkeys(unanswered) if q]
    for o in outcomes:
        if getattr(o, "name", None) == ESCALATE_TOOL and unanswered:
            args = getattr(o, "args", None)
            summary = args.get("summary") if isinstance(args, dict) else None
            gaps.append(
                GapRecord(
                    "escalated", unanswered[-1], thread_id, at, run_id, player, str(summary or "") or None
                )
            )
    return gaps


def citations_of(outcome: Any) -> list[str]:
    """The citation labels a `search_policy` outcome returned (empty for any other tool)."""
    if getattr(outcome, "name", None) != POLICY_TOOL:
        return []
    hits = (getattr(outcome.result, "data", None) or {}).get("hits") or []
    labels = []
    for hit in hits:
        label = hit.get("citation") if isinstance(hit, dict) else None
        if isinstance(label, str) and label and label not in labels:
            labels.append(label[:200])
    return labels


async def record_run(
    store: Store,
    *,
    run_id: str,
    thread_id: str,
    player: str,
    started_at: datetime,
    answered_at: datetime,
    locale: str,
    outcomes: Iterable[Any],
    relayed_incidents: Iterable[int] = (),
    alongside: Iterable[TableRows] = (),
) -> bool:
    """Store one delivered run and its tool calls; False (logged) when the write failed.
    `relayed_incidents`: the open incidents whose notice the delivered answer relayed (`bot.incidents.tell`).
    `alongside`: more rows written in the same transaction (the delivered answer's thread message: one
    commit per run instead of two); when the write fails none of them is stored either.

    One transaction of Core inserts (`Store.insert_rows`): on file SQLite a single loop-thread unit,
    so a burst of finishing runs neither queues for pooled driver connections nor holds the write
    lock from another connection while the thread history is written.
    """
    calls: list[dict[str, Any]] = []
    citations: list[dict[str, Any]] = []
    outcomes = list(outcomes)
    gaps = policy_gaps_of(outcomes, run_id=run_id, thread_id=thread_id, player=player, at=answered_at)
    for o in outcomes:
        calls.append(
            {
                "run_id": run_id,
                "at": answered_at,
                "tool": o.name,
                "code": str(o.result.code),
                "ok": bool(o.result.ok),
            }
        )
        citations.extend({"run_id": run_id, "at": answered_at, "section": s} for s in citations_of(o))
    run = {
        "run_id": run_id,
        "thread_id": thread_id,
        "player": player,
        "started_at": started_at,
        "answered_at": answered_at,
        "locale": locale,
    }
    try:
        await add_run(
            store,
            run,
            calls=calls,
            citations=citations,
            gaps=gaps,
            relayed_incidents=relayed_incidents,
            answered_at=answered_at,
            alongside=alongside,
        )
    except Exception:
        log.exception("could not record run %s for analytics", run_id)
        return False
    return True
