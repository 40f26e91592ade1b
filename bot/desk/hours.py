"""Staff hours (`ARCA_SUPPORT_HOURS` in `ARCA_TIMEZONE`, holidays from a file): whether staff are in,
the sentence telling a player who escalates out of hours when staff return, and the hours in words.

Hand-written (a few lines of `datetime`) rather than a calendar library: the schedule is a handful of
weekly windows and a list of dates, and the project takes no dependency for that. Days are English
(`mon`–`sun`) or Korean (`월`–`일`, `월요일`…, `평일`, `주말`); a window may run past midnight
(`fri 22:00-06:00` is Friday night into Saturday morning) and belongs to the day it starts on, holidays
included. A bad value is refused with the entry's position and what was expected, never its text (a
secret pasted into the wrong setting would otherwise be printed at start-up and kept in the logs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.config import ConfigError, Settings
from bot.vocabulary.dates import day_text, day_time_text

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DAYS_KO = "월화수목금토일"
_DAY_NAMES = {
    **{name: i for i, name in enumerate(DAYS)},
    **{name: i for i, name in enumerate(DAYS_KO)},
    **{f"{name}요일": i for i, name in enumerate(DAYS_KO)},
}
_DAY_GROUPS = {
    "평일": "월-금",
    "주말": "토-일",
    "weekdays": "mon-fri",
    "weekends": "sat-sun",
    "weekend": "sat-sun",
}
_ENTRY = re.compile(
    r"^\s*(?P<days>\S+(?:\s*[,\-~]\s*\S+)*?)\s+(?P<start>\d{1,2}:\d{2})\s*[-~]\s*(?P<end>\d{1,2}:\d{2})\s*$"
)
EXAMPLE = "e.g. 'mon-fri 10:00-19:00; sat 10:00-14:00' or '월-금 10:00-19:00; 토 10:00-14:00'"
LOOKAHEAD_DAYS = 400
"""How far ahead the next opening is sought (a year of holidays cannot hide it)."""
WEEK = timedelta(days=7)


@dataclass(frozen=True)
class SupportHours:
    """Weekly windows (weekday → [(start, end)]) in `tz`, closed on `holidays`. No windows: always open.
    A window whose end is not after its start runs past midnight into the next day."""

    tz: ZoneInfo
    windows: dict[int, list[tuple[time, time]]] = field(default_factory=dict)
    holidays: frozenset[date] = frozenset()

    @classmethod
    def parse(cls, spec: str, tz: ZoneInfo, holidays: frozenset[date] = frozenset()) -> SupportHours:
        """`mon-fri 10:00-19:00; sat 10:00-14:00` → windows; raises ValueError naming the bad entry by
        its position (1 = the first), not by its text."""
        windows: dict[int, list[tuple[time, time]]] = {}
        entries = spec.lower().split(";")
        if spec.strip() and not any(e.strip() for e in entries):
            raise ValueError(
                "it has separators but no hours; leave it empty to count staff as always in, or give "
                f"hours ({EXAMPLE})"
            )
        for n, raw in enumerate(entries, 1):
            if not raw.strip():
                continue
            m = _ENTRY.match(raw)
            if m is None:
                raise ValueError(f"entry {n} is not days and hours ({EXAMPLE})")
            start, end = _clock(m["start"], n), _clock(m["end"], n)
            if end == start:
                raise ValueError(f"entry {n} starts and ends at the same time (a window of no time)")
            for day in _days(m["days"], n):
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

    def _spans(self, day: date, *, holidays: bool = True) -> list[tuple[datetime, datetime]]:
        """The windows that start on `day` (none on a holiday), as (opens, closes) in `tz`."""
        if holidays and day in self.holidays:
            return []
        out = []
        for start, end in self.windows.get(day.weekday(), []):
            opens = datetime.combine(day, start, self.tz)
            closes = datetime.combine(day + timedelta(days=1) if end <= start else day, end, self.tz)
            out.append((opens, closes))
        return out

    def next_opening(self, now: datetime) -> datetime | None:
        """None while staff are in; else when they next start (in `tz`)."""
        if self.always_open:
            return None
        local = now.astimezone(self.tz)
        # From yesterday: a window that started last night may still be open.
        for offset in range(-1, LOOKAHEAD_DAYS):
            for opens, closes in self._spans(local.date() + timedelta(days=offset)):
                if opens <= local < closes:
                    return None
                if opens > local:
                    return opens
        return None

    def longest_away(self) -> timedelta:
        """The longest time in an ordinary week (holidays aside) with no staff in; zero when always in."""
        if self.always_open:
            return timedelta(0)
        monday = date(2024, 1, 1)  # any Monday: the week is the same every week
        origin = datetime.combine(monday, time(0), self.tz)
        spans = sorted(
            (opens - origin, closes - origin)
            for offset in range(7)
            for opens, closes in self._spans(monday + timedelta(days=offset), holidays=False)
        )
        longest, reach, covered_until = timedelta(0), spans[0][0], spans[0][1]
        for start, end in spans[1:]:
            if start > covered_until:
                longest = max(longest, start - covered_until)
            covered_until = max(covered_until, end)
        # Around the week's end: from the last close back to the first opening of next week.
        longest = max(longest, reach + WEEK - covered_until)
        return max(longest, timedelta(0))

    def describe(self, locale: str) -> list[str]:
        """The hours in force, one line a group of days with the same windows, in the staff member's
        language (`월–금 10:00–19:00`, `mon–fri 10:00–19:00`); ["always"] wording when unset."""
        if self.always_open:
            return ["항상 근무(설정 없음)" if locale == "ko" else "always in (not set)"]
        names = DAYS_KO if locale == "ko" else [d.title() for d in DAYS]
        lines: list[str] = []
        day = 0
        while day < 7:
            spans = self.windows.get(day)
            last = day
            while last + 1 < 7 and self.windows.get(last + 1) == spans:
                last += 1
            if spans:
                days = names[day] if last == day else f"{names[day]}–{names[last]}"
                hours = ", ".join(_span_words(start, end, locale) for start, end in spans)
                lines.append(f"{days} {hours}")
            day = last + 1
        return lines

    def notice(self, now: datetime, locale: str) -> str | None:
        """The player's sentence when staff are away, in their language; None while staff are in."""
        opens = self.next_opening(now)
        if opens is None:
            return None
        zone = opens.tzname() or str(self.tz)
        if locale == "ko":
            return f"지금은 운영진 근무 시간이 아닙니다. 운영진은 {day_time_text(opens, 'ko')}({zone})부터 답변드립니다."
        return (
            f"Staff are away right now; they are back on {day_text(opens, 'en')} at {opens:%H:%M} ({zone})."
        )


def _span_words(start: time, end: time, locale: str) -> str:
    close = "24:00" if end == time(23, 59, 59) else f"{end:%H:%M}"
    if end <= start:
        close = f"{'다음 날' if locale == 'ko' else 'next day'} {close}"
    return f"{start:%H:%M}–{close}"


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


def _clock(text: str, entry: int) -> time:
    hours, minutes = (int(p) for p in text.split(":"))
    if hours == 24 and minutes == 0:
        return time(23, 59, 59)
    if hours > 23 or minutes > 59:
        raise ValueError(f"entry {entry} has a time that is not a clock time (00:00 to 24:00)")
    return time(hours, minutes)


def _day(name: str, entry: int) -> int:
    if name not in _DAY_NAMES:
        raise ValueError(
            f"entry {entry} names an unknown day (days are {', '.join(DAYS)} or {', '.join(DAYS_KO)}, "
            "ranges like mon-fri or 월-금, and 평일 or 주말)"
        )
    return _DAY_NAMES[name]


def _days(text: str, entry: int) -> list[int]:
    out: list[int] = []
    for part in filter(None, (p.strip() for p in text.replace(" ", "").split(","))):
        part = _DAY_GROUPS.get(part, part).replace("~", "-")
        first, _, last = part.partition("-")
        a, b = _day(first, entry), _day(last or first, entry)
        out += [d % 7 for d in range(a, b + 1 if b >= a else b + 8)]
    return out
