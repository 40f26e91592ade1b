"""Dates and times as staff and players read them: `3월 3일(화) 14:05` in Korean, `Tue Mar 3 14:05` in
English, in the service time zone; never a US date (`03/03/2026`) or a raw ISO stamp in a sentence.

Hand-written rather than Babel: the Korean form is one f-string and the English one is fixed on purpose
(the same for every English reader), so a locale database would add a dependency and change nothing.
ISO dates stay where a person types or sorts them (form fields, CSV, table columns).
"""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

DAYS_KO = "월화수목금토일"
"""Monday first, as `date.weekday()` counts."""
DAYS_EN = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS_EN = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _zone(zone: ZoneInfo | str | None) -> ZoneInfo | None:
    return ZoneInfo(zone) if isinstance(zone, str) else zone


def day_text(
    when: date | datetime, locale: str | None, zone: ZoneInfo | str | None = None, *, year: bool = False
) -> str:
    """`3월 3일(화)` / `Tue Mar 3`; with `year`, `2026년 3월 3일(화)` / `Tue Mar 3, 2026`. A datetime is
    first moved to `zone` (the service time zone), so the day is the one the reader lives in."""
    if isinstance(when, datetime) and _zone(zone) is not None:
        when = when.astimezone(_zone(zone))
    if locale == "ko":
        head = f"{when.year}년 " if year else ""
        return f"{head}{when.month}월 {when.day}일({DAYS_KO[when.weekday()]})"
    tail = f", {when.year}" if year else ""
    return f"{DAYS_EN[when.weekday()]} {MONTHS_EN[when.month - 1]} {when.day}{tail}"


def day_time_text(
    when: datetime, locale: str | None, zone: ZoneInfo | str | None = None, *, year: bool = False
) -> str:
    """`3월 3일(화) 14:05` / `Tue Mar 3 14:05` (with `year`: `2026년 3월 3일(화) 14:05` /
    `Tue Mar 3, 2026 14:05`), in `zone`."""
    local = when.astimezone(_zone(zone)) if _zone(zone) is not None else when
    return f"{day_text(local, locale, year=year)} {local:%H:%M}"


def zoned_text(when: datetime, locale: str | None, zone: ZoneInfo | str | None, *, year: bool = False) -> str:
    """`day_time_text` followed by the zone's abbreviation (`3월 3일(화) 14:05 KST`), for text read away
    from the console (Discord, a report), where the reader's zone is not known."""
    local = when.astimezone(_zone(zone) or ZoneInfo("UTC"))
    return f"{day_time_text(local, locale, year=year)} {local.tzname()}"
