"""The SLA reminders staff see in the web console (issue 26): whichever process sent a reminder, its
audit row (`sla.reminder`, `bot.desk.sla`) is what the conversations page lists, newest first, with the
conversation each is about — so the console shows every reminder whatever channel the process served.

Each row names the player and the conversation (not `escalation:1`), gives the target's due time and
says whether it was already missed (지남) or is still due (임박) now; more than `SHOWN_AT_MOST` rows say
how many more there are (issue 51)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.analytics.staff_response import SlaTargets
from bot.desk.sla import REMINDER_ACTION
from bot.store import Store, audit_views
from bot.store.escalations import escalations_by_id

SHOWN_FOR = timedelta(hours=24)
SHOWN_AT_MOST = 20


@dataclass(frozen=True)
class ReminderRow:
    at: datetime
    escalation: str
    """`escalation:<id>`."""
    thread_id: str | None
    target: str
    """`first_response` or `resolution`."""
    number: int | None = None
    """The escalation's number (`#3`), None when the row names none."""
    player: str | None = None
    """Who asked: the player id (or Discord id) of the escalation."""
    summary: str = ""
    due_at: datetime | None = None
    """When the target is (was) due: the escalation's time plus the target."""
    missed: bool = False
    """The due time has passed (지남), rather than being near (임박)."""


@dataclass(frozen=True)
class Reminders:
    rows: list[ReminderRow]
    more: int
    """Reminders of the window beyond the ones listed."""

    def __bool__(self) -> bool:
        return bool(self.rows)

    def __iter__(self):  # the template loops over the rows
        return iter(self.rows)


def _number(target: str) -> int | None:
    kind, _, number = target.partition(":")
    return int(number) if kind == "escalation" and number.isdigit() else None


async def recent_reminders(store: Store, now: datetime, targets: SlaTargets | None = None) -> Reminders:
    """SLA reminders of the last `SHOWN_FOR`, newest first, with what they are about."""
    targets = targets or SlaTargets()
    audits, total = await audit_views.recent_of_action(
        store, REMINDER_ACTION, since=now - SHOWN_FOR, limit=SHOWN_AT_MOST
    )
    numbers = {n for a in audits if (n := _number(a.target or "")) is not None}
    escalations = await escalations_by_id(store, numbers)
    rows = []
    for a in audits:
        number = _number(a.target or "")
        found = escalations.get(number) if number is not None else None
        span = targets.first_response if a.code == "first_response" else targets.resolution
        due = found.created_at + span if found is not None else None
        rows.append(
            ReminderRow(
                a.at,
                a.target or "?",
                a.thread_id or (found.thread_id if found is not None else None),
                a.code or "?",
                number=number,
                player=(found.player_id or found.discord_id) if found is not None else None,
                summary=found.summary if found is not None else "",
                due_at=due,
                missed=due is not None and now >= due,
            )
        )
    return Reminders(rows, max(0, int(total) - len(rows)))
