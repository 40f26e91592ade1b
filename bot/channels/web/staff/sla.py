"""The SLA reminders staff see in the web console (issue 26): whichever process sent a reminder, its
audit row (`sla.reminder`, `bot.desk.sla`) is what the conversations page lists, newest first, with the
conversation each is about — so the console shows every reminder whatever channel the process served."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select

from bot.desk.sla import REMINDER_ACTION
from bot.store import AuditEntry, Store

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


async def recent_reminders(store: Store, now: datetime) -> list[ReminderRow]:
    """SLA reminders of the last `SHOWN_FOR`, newest first."""
    async with store.session() as s:
        rows = (
            await s.execute(
                select(AuditEntry)
                .where(AuditEntry.action == REMINDER_ACTION, AuditEntry.at >= now - SHOWN_FOR)
                .order_by(AuditEntry.id.desc())
                .limit(SHOWN_AT_MOST)
            )
        ).scalars()
        return [ReminderRow(r.at, r.target or "?", r.thread_id, r.code or "?") for r in rows]
