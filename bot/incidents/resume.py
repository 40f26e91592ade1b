"""Runs left behind: a compensation still `approved` whose incident has had no audited activity (no grant
batch, no approval, no resume) for `QUIET` was cut by its process stopping, and is run again under the
name of the staff member who approved it. Resuming is safe whoever does it — every coupon has its key,
so a run that was in fact still going elsewhere only shares the work — and the resume's own audit row
tells other processes that look meanwhile to leave it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from bot.incidents.compensation import RunResult, run_compensation
from bot.store import Store
from bot.store.incidents import IncidentRecord

QUIET = timedelta(seconds=30)
"""A live run writes a batch every fraction of a second; this long without one, nobody is running it."""
RESUMER = "system:resume"


async def interrupted_runs(
    store: Store, *, now: datetime | None = None, quiet: timedelta = QUIET
) -> list[IncidentRecord]:
    """The incidents whose approved compensation nobody has advanced for `quiet`."""
    now = now or datetime.now(UTC)
    out = []
    for incident in await store.incidents.list():
        if incident.comp_state != "approved":
            continue
        last = await store.incidents.last_activity(incident.id)
        if last is None or now - last >= quiet:
            out.append(incident)
    return out


async def resume_run(
    store: Store,
    incident: IncidentRecord,
    *,
    clock: Callable[[], datetime],
    valid_days: int = 30,
    timezone: str = "Asia/Seoul",
) -> RunResult:
    """Audit the resume, then run the plan again (what exists is kept) under its approver's name."""
    approver = incident.comp_approved_by or RESUMER
    await store.audit(
        actor=RESUMER,
        action="incident.compensation_resumed",
        target=f"incident:{incident.id}",
        code="OK",
        detail={"approved_by": approver},
    )
    return await run_compensation(
        store, incident.id, actor=approver, clock=clock, valid_days=valid_days, timezone=timezone
    )
