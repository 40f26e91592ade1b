"""How fast staff answer escalations: per escalation, the first staff response (a takeover or a reply
from the staff console) and the resolution (the thread handed back to the bot), read from the audit;
with the first-response and resolution targets, the SLA figures of `arca-bot stats` and the dashboard.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.analytics.percentiles import percentile
from bot.config import Settings
from bot.store import Store
from bot.store.audit_views import actions_in_threads
from bot.store.escalations import escalations_between

FIRST_RESPONSE_ACTIONS = ("handoff", "console.reply")
"""Audit actions that are a person answering: a takeover (`/handoff`, Take over) or a console reply."""
RESOLUTION_ACTIONS = ("resume",)
"""The thread handed back to the bot: the person is done with it."""


@dataclass(frozen=True)
class SlaTargets:
    """Per escalation: a person answers within `first_response`, and it is resolved within `resolution`;
    staff are reminded `warn_before` a target is missed."""

    first_response: timedelta = timedelta(hours=1)
    resolution: timedelta = timedelta(hours=24)
    warn_before: timedelta = timedelta(minutes=10)

    @classmethod
    def from_settings(cls, settings: Settings) -> SlaTargets:
        return cls(
            first_response=timedelta(minutes=settings.sla_first_response_minutes),
            resolution=timedelta(minutes=settings.sla_resolution_minutes),
            warn_before=timedelta(minutes=settings.sla_warn_minutes),
        )


@dataclass(frozen=True)
class EscalationTiming:
    """One escalation and when a person first answered it and resolved it (None: not yet)."""

    escalation_id: int
    thread_id: str | None
    created_at: datetime
    first_response_at: datetime | None
    resolved_at: datetime | None

    @property
    def first_response_seconds(self) -> float | None:
        if self.first_response_at is None:
            return None
        return max(0.0, (self.first_response_at - self.created_at).total_seconds())


async def escalation_timings(store: Store, *, since: datetime, until: datetime) -> list[EscalationTiming]:
    """Escalations created in [since, until), each with the first staff action on its thread after it."""
    rows = await escalations_between(store, since=since, until=until)
    threads = sorted({r.thread_id for r in rows if r.thread_id})
    actions = await actions_in_threads(
        store, threads, FIRST_RESPONSE_ACTIONS + RESOLUTION_ACTIONS, since=since
    )
    out = []
    for r in rows:
        after = [a for a in actions if a.thread_id == r.thread_id and a.at >= r.created_at]
        first = next((a.at for a in after if a.action in FIRST_RESPONSE_ACTIONS), None)
        resolved = next((a.at for a in after if a.action in RESOLUTION_ACTIONS), None)
        out.append(EscalationTiming(r.id, r.thread_id, r.created_at, first, resolved))
    return out


def sla_figures(
    timings: list[EscalationTiming], targets: SlaTargets, now: datetime
) -> dict[str, float | int]:
    """First-staff-response p50/p90 (seconds, answered escalations) and the share of escalations whose
    first-response target was met, among those already answered or past their target."""
    answered = [t.first_response_seconds for t in timings if t.first_response_seconds is not None]
    limit = targets.first_response.total_seconds()
    judged = [
        t for t in timings if t.first_response_at is not None or now >= t.created_at + targets.first_response
    ]
    met = [t for t in judged if t.first_response_seconds is not None and t.first_response_seconds <= limit]
    return {
        "first_staff_response_seconds_p50": round(percentile(answered, 50), 3),
        "first_staff_response_seconds_p90": round(percentile(answered, 90), 3),
        "sla_first_response_met_share": round(len(met) / len(judged), 4) if judged else 0.0,
        "escalations_judged": len(judged),
    }
