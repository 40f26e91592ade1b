"""Calendar days in the service time zone (`ARCA_TIMEZONE`): daily caps, period reports, dates in messages."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo


def local_date(moment: datetime | None, timezone: str) -> str:
    """`2026-04-01`: the calendar date of `moment` in `timezone` ("" for None)."""
    return "" if moment is None else moment.astimezone(ZoneInfo(timezone)).date().isoformat()


def local_midnight(day: date, timezone: str) -> datetime:
    """The aware datetime at which `day` starts in `timezone`."""
    return datetime.combine(day, time.min, tzinfo=ZoneInfo(timezone))


def day_bounds(now: datetime, timezone: str) -> tuple[datetime, datetime]:
    """The calendar day containing `now` in `timezone`, as aware datetimes [start, end)."""
    day = now.astimezone(ZoneInfo(timezone)).date()
    return local_midnight(day, timezone), local_midnight(day + timedelta(days=1), timezone)
