"""SLA reminders: when an escalation is about to miss its first-response or resolution target, staff
are told once in the staff channel (every staff sink: Discord's staff channel, the console), and the
reminder is audited (`sla.reminder`), which is also how a restarted process knows it was already sent.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from bot.analytics.staff_response import SlaTargets, escalation_timings
from bot.desk.auto_close import Tell, close_idle, closed_escalations
from bot.desk.hours import SupportHours
from bot.periodic import Periodic
from bot.store import Store, audit_views
from bot.store.desk_claims import claim

log = logging.getLogger(__name__)

LOOKBACK = timedelta(days=7)
"""Escalations older than this are past any reminder worth sending."""
REMINDER_ACTION = "sla.reminder"

Target = Literal["first_response", "resolution"]
Notify = Callable[[str, dict], Awaitable[None]]


@dataclass(frozen=True)
class SlaReminder:
    """One target of one escalation that is about to be (or was) missed."""

    escalation_id: int
    thread_id: str | None
    target: Target
    due_at: datetime


def _span(delta: timedelta) -> str:
    minutes = round(delta.total_seconds() / 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


def hours_problems(hours: SupportHours, targets: SlaTargets) -> list[str]:
    """The SLA targets that the staff hours make impossible to meet: a target shorter than the longest
    time no one is in (the SLA clock runs around the clock, so an escalation made as staff leave
    misses it before anyone is back). One sentence each, for `doctor` and the start-up log."""
    away = hours.longest_away()
    problems = []
    for setting, target in (
        ("ARCA_SLA_FIRST_RESPONSE_MINUTES", targets.first_response),
        ("ARCA_SLA_RESOLUTION_MINUTES", targets.resolution),
    ):
        if target < away:
            problems.append(
                f"{setting} ({_span(target)}) is shorter than the longest time staff are away "
                f"({_span(away)} in ARCA_SUPPORT_HOURS): an escalation made as staff leave misses it "
                f"before anyone is back; raise it to at least {round(away.total_seconds() / 60)} minutes "
                "or widen the hours"
            )
    return problems


async def due_reminders(store: Store, targets: SlaTargets, now: datetime) -> list[SlaReminder]:
    """Targets within `warn_before` of their deadline (or past it), not met and not reminded yet."""
    timings = await escalation_timings(store, since=now - LOOKBACK, until=now + timedelta(seconds=1))
    sent = await audit_views.targets_and_codes(store, REMINDER_ACTION, since=now - 2 * LOOKBACK)
    closed = await closed_escalations(store)
    out: list[SlaReminder] = []
    for t in timings:
        if f"escalation:{t.escalation_id}" in closed:
            continue  # auto-closed: no target left to miss
        open_targets: list[tuple[Target, timedelta]] = []
        if t.first_response_at is None:
            open_targets.append(("first_response", targets.first_response))
        if t.resolved_at is None:
            open_targets.append(("resolution", targets.resolution))
        for name, span in open_targets:
            due = t.created_at + span
            if now >= due - targets.warn_before and (f"escalation:{t.escalation_id}", name) not in sent:
                out.append(SlaReminder(t.escalation_id, t.thread_id, name, due))
    return out


async def send_reminders(
    store: Store,
    notify: Notify,
    targets: SlaTargets,
    now: datetime,
    *,
    by: str = "desk",
    wait: timedelta = timedelta(0),
) -> list[SlaReminder]:
    """Audit and post every due reminder once across processes (a `sla:<id>:<target>` claim; kind `sla`).
    `wait`: claim only reminders due that long ago, leaving the first go to a process that posts them in
    the Discord staff channel."""
    due = []
    for r in await due_reminders(store, targets, now):
        if now < r.due_at - targets.warn_before + wait:
            continue
        if await claim(store, f"sla:{r.escalation_id}:{r.target}", by=by, now=now):
            due.append(r)
    for r in due:
        await store.audit(
            actor="desk",
            action=REMINDER_ACTION,
            thread_id=r.thread_id,
            target=f"escalation:{r.escalation_id}",
            code=r.target,
        )
        minutes = round((r.due_at - now).total_seconds() / 60)
        await notify(
            "sla",
            {
                "escalation_id": r.escalation_id,
                "thread_id": r.thread_id,
                "target": r.target,
                "due_at": r.due_at.isoformat(),
                "minutes_left": minutes,
            },
        )
    return due


class SlaWatch:
    """Checks the targets every `every` seconds while a channel runs (started and stopped by it)."""

    def __init__(
        self,
        store: Store,
        notify: Notify,
        targets: SlaTargets,
        clock: Callable[[], datetime],
        every: float = 60.0,
        *,
        tell: Tell | None = None,
        close_after: timedelta | None = None,
        owns: Callable[[str], bool] | None = None,
        wait: timedelta = timedelta(0),
    ) -> None:
        self.store, self.notify, self.targets, self.clock, self.every = store, notify, targets, clock, every
        self.tell, self.close_after = tell, close_after
        """Idle escalated conversations are closed through `tell` after `close_after` (`bot.desk.auto_close`)."""
        self.owns, self.wait = owns, wait
        """The conversations this process closes (None: all), and how long it leaves a due reminder to a
        Discord process before claiming it (`send_reminders`)."""
        self.by = f"{socket.gethostname()}:{os.getpid()}"
        self._periodic = Periodic(
            self.check_once, every, name="desk-sla-watch", log=log, failure="SLA check failed"
        )

    @property
    def checks(self) -> int:
        """Checks ended so far, failed ones included (tests wait on it)."""
        return self._periodic.rounds

    def start(self) -> None:
        self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()

    async def check_once(self) -> None:
        """Close what idled past `close_after`, then send the reminders that are due."""
        if self.tell is not None and self.close_after is not None:
            await close_idle(
                self.store, self.tell, self.clock(), self.close_after, by=self.by, owns=self.owns
            )
        await send_reminders(self.store, self.notify, self.targets, self.clock(), by=self.by, wait=self.wait)
