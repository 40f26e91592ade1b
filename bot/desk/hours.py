"""Staff hours (`ARCA_SUPPORT_HOURS` in `ARCA_TIMEZONE`, holidays from a file): whether staff are in,
and the sentence telling a player who escalates out of hours when staff return.

Hand-written (a few lines of `datetime`) rather than a calendar library: the schedule is a handful of
weekly windows and a list of dates, and the project takes no dependency for that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.config import ConfigError, Settings

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DAYS_KO = "월화수목금토일"
_ENTRY = re.compile(r"^\s*(?P<days>[a-z,\-]+)\s+(?P<start>\d{1,2}:\d{2})\s*-\s*(?P<end>\d{1,2}:\d{2})\s*$")
LOOKAHEAD_DAYS = 400
"""How far ahead the next opening is sought (a year of holidays cannot hide it)."""


@dataclass(frozen=True)
class SupportHours:
    """Weekly windows (weekday → [(start, end)]) in `tz`, closed on `holidays`. No windows: always open."""

    tz: ZoneInfo
    windows: dict[int, list[tuple[time, time]]] = field(default_factory=dict)
    holidays: frozenset[date] = frozenset()

    @classmethod
    def parse(cls, spec: str, tz: ZoneInfo, holidays: frozenset[date] = frozenset()) -> SupportHours:
        """`mon-fri 10:00-19:00; sat 10:00-14:00` → windows; raises ValueError naming the bad entry."""
        windows: dict[int, list[tuple[time, time]]] = {}
        for raw in filter(str.strip, spec.lower().split(";")):
            m = _ENTRY.match(raw)
            if m is None:
                raise ValueError(f"{raw.strip()!r}: expected e.g. 'mon-fri 10:00-19:00'")
            start, end = _clock(m["start"]), _clock(m["end"])
            if end <= start:
                raise ValueError(f"{raw.strip()!r}: the window must end after it starts (same day)")
            for day in _days(m["days"]):
                windows.setdefault(day, []).append((start, end))
        for spans in windows.values():
            spans.sort()
        return cls(tz=tz, windows=windows, holidays=holidays)

    @classmethod
    def from_settings(cls, settings: Settings) -> SupportHours:
        """The configured hours; a bad value or holidays file is a `ConfigError` (one line)."""
        try:
            holidays = read_holidays(settings.support_holidays) if settings.support_holidays else frozenset()
            return cls.parse(settings.support_hours, settings.tz, holidays)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"ARCA_SUPPORT_HOURS / ARCA_SUPPORT_HOLIDAYS: {exc}") from exc

    @property
    def always_open(self) -> bool:
        return not self.windows

    def next_opening(self, now: datetime) -> datetime | None:
        """None while staff are in; else when they next start (in `tz`)."""
        if self.always_open:
            return None
        local = now.astimezone(self.tz)
        for offset in range(LOOKAHEAD_DAYS):
            day = local.date() + timedelta(days=offset)
            if day in self.holidays:
                continue
            for start, end in self.windows.get(day.weekday(), []):
                opens = datetime.combine(day, start, self.tz)
                if opens <= local < datetime.combine(day, end, self.tz):
                    return None
                if opens > local:
                    return opens
        return None

    def notice(self, now: datetime, locale: str) -> str | None:
        """The player's sentence when staff are away, in their language; None while staff are in."""
        opens = self.next_opening(now)
        if opens is None:
            return None
        zone = opens.tzname() or str(self.tz)
        if locale == "ko":
            when = f"{opens.month}월 {opens.day}일({DAYS_KO[opens.weekday()]}) {opens:%H:%M}"
            return f"지금은 운영진 근무 시간이 아닙니다. 운영진은 {when}({zone})부터 답변드립니다."
        when = f"{DAYS[opens.weekday()].title()} {opens:%b} {opens.day} at {opens:%H:%M}"
        return f"Staff are away right now; they are back on {when} ({zone})."


def read_holidays(path: Path) -> frozenset[date]:
    """One `YYYY-MM-DD` a line; `#` starts a comment; blank lines are skipped."""
    # The error names the file and the line, never what the line holds: a secret put in the wrong file
    # (a token, a key) would otherwise be printed at start-up and kept in the logs.
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text (expected one YYYY-MM-DD date a line)") from None
    days: set[date] = set()
    for n, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            days.add(date.fromisoformat(text))
        except ValueError:
            raise ValueError(
                f"{path}:{n}: the line is not a YYYY-MM-DD date (its text is not shown)"
            ) from None
    return frozenset(days)


def _clock(text: str) -> time:
    hours, minutes = (int(p) for p in text.split(":"))
    if hours == 24 and minutes == 0:
        return time(23, 59, 59)
    return time(hours, minutes)


def _days(text: str) -> list[int]:
    out: list[int] = []
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        if first not in DAYS or (last and last not in DAYS):
            raise ValueError(f"{part!r}: days are {', '.join(DAYS)} (ranges like mon-fri)")
        a, b = DAYS.index(first), DAYS.index(last or first)
        out += [d % 7 for d in range(a, b + 1 if b >= a else b + 8)]
    return out
