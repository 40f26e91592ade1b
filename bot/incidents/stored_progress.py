"""How far an incident's bulk grant is, read from the store: the coupons under the incident's keys and
the exclusions written so far, against the targets its scope covers. Any process may be issuing (a CLI
run, another web worker, a restart that resumes): what is stored is what it did."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from bot.incidents.compensation import Progress
from bot.store import Store
from bot.store.incident_records import IncidentRecord
from bot.store.incident_tables import IncidentExclusion


@dataclass(frozen=True)
class StoredProgress:
    """The run's progress and the plan's state (`previewed`, `approved` = issuing, `done`, …)."""

    progress: Progress
    state: str | None

    @property
    def finished(self) -> bool:
        return self.state in ("done", "cancelled", None)

    @property
    def percent(self) -> int:
        p = self.progress
        return 100 if p.total == 0 else min(100, p.done * 100 // p.total)


async def stored_progress(store: Store, incident: IncidentRecord) -> StoredProgress:
    """The grant's progress as stored now (nothing is written)."""
    plan = incident.plan()
    if plan is None:
        return StoredProgress(Progress(incident.id, 0, 0, 0, 0, 0), incident.comp_state)
    if plan.per == "order":
        total = await store.incidents.count_orders(incident)
    else:
        total = len(await store.incidents.targets(incident, "player"))
    grants = await store.incidents.grant_summary(incident.id)
    query = select(func.count(IncidentExclusion.id)).where(IncidentExclusion.incident_id == incident.id)
    async with store.session() as s:
        excluded = int((await s.execute(query)).scalar_one())
    done = min(total, grants.coupons + excluded)
    return StoredProgress(
        Progress(incident.id, done, total, grants.coupons, excluded, grants.spent), incident.comp_state
    )
