"""Declaring an incident with a start time and an optional planned end (the staff web console's form):
the same `store.incidents.open` as `/incident open` and the CLI, then the planned end, audited."""

from __future__ import annotations

from datetime import datetime

from bot.store import Store
from bot.store.incident_scope import IncidentScope
from bot.store.incidents import IncidentRecord


async def declare(
    store: Store,
    *,
    title: str,
    notice_ko: str,
    notice_en: str,
    scope: IncidentScope,
    start: datetime,
    end: datetime | None,
    actor: str,
) -> IncidentRecord:
    """Open the incident from `start`; a planned `end` is kept as its end until it is closed."""
    incident = await store.incidents.open(
        title=title, notice_ko=notice_ko, notice_en=notice_en, scope=scope, actor=actor, now=start
    )
    if end is None:
        return incident
    await store.incidents.set_planned_end(incident.id, end, actor=actor)
    return await store.incidents.get(incident.id) or incident
