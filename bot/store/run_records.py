"""Writing what analytics reads about one delivered answer: its `runs` row, its tool calls, the policy
sections it cited, the questions no policy answered and the incident notices it relayed — one
transaction of Core inserts (`Store.insert_rows`), with any rows the caller adds (the answer's thread
message), so either all of them are stored or none."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from bot.store.database import Store
from bot.store.incident_tables import IncidentNoticeAnswer
from bot.store.models import Run, RunCitation, RunToolCall
from bot.store.policy_gaps import GapRecord, PolicyGap
from bot.store.units import TableRows


async def add_run(
    store: Store,
    run: dict[str, Any],
    *,
    calls: list[dict[str, Any]],
    citations: list[dict[str, Any]],
    gaps: list[GapRecord],
    relayed_incidents: Iterable[int],
    answered_at: datetime,
    alongside: Iterable[TableRows] = (),
) -> None:
    """Store the run (`runs` columns), its `calls` and `citations`, its policy `gaps` and one row per
    relayed incident, with `alongside`, in one transaction; raises when the write fails."""
    await store.insert_rows(
        [
            (Run.__table__, [run]),
            (RunToolCall.__table__, calls),
            (RunCitation.__table__, citations),
            (PolicyGap.__table__, [g.row() for g in gaps]),
            (
                IncidentNoticeAnswer.__table__,
                [{"incident_id": i, "run_id": run["run_id"], "at": answered_at} for i in relayed_incidents],
            ),
            *alongside,
        ]
    )
