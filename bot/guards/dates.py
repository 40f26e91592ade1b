"""Dates and durations an answer computes rather than copies: today + a window, an issue date + a coupon's
validity, the player's own date + a policy window, the next calendar day after a daily cap, and the
length of a window whose two ends someone wrote ("02:00 to 06:00, so about 4 hours").

The fact check (`bot.guards.fact_check`) asks `Calendar.backs_date` / `backs_duration` before it calls a
date or a duration unbacked; `weekday_errors` catches a weekday name that does not fall on its date.
Today is the clock's date in `ARCA_TIMEZONE` (`local_today`). Pure functions of text and dates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

from bot.guards.facts import DATE, DURATION, TIME, Fact, calendar_pieces, extract_facts, fold_case

MONTH_MINUTES = 43_200
DAY_MINUTES = 1_440


def local_today(clock: datetime, timezone: str) -> date:
    """The clock's calendar date where the game runs (a naive clock is taken as already local)."""
    if clock.tzinfo is None:
        return clock.date()
    try:
        return clock.astimezone(ZoneInfo(timezone)).date()
    except Exception:  # an unknown zone: the clock's own date, never a crash in the guard
        return clock.date()


def resolve(value: str, today: date) -> date | None:
    """A fact's date value ("2026-03-16" or "03-16") as a date; a month-day takes the year that puts it
    nearest to today."""
    try:
        if len(value) == 10:
            return date.fromisoformat(value)
        month, day = (int(p) for p in value.split("-"))
        options = []
        for year in (today.year - 1, today.year, today.year + 1):
            try:
                options.append(date(year, month, day))
            except ValueError:
                continue
        return min(options, key=lambda d: abs((d - today).days)) if options else None
    except ValueError:
        return None


def add_months(start: date, months: int) -> date:
    month = start.month - 1 + months
    year, month = start.year + month // 12, month % 12 + 1
    for day in (start.day, 30, 29, 28):
        try:
            return date(year, month, day)
        except ValueError:
            continue
    return start


_ORDINAL_EN = re.compile(r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)\b|\bon\s+the\s+(\d{1,2})\b", re.IGNORECASE)
_DAY_KO = re.compile(r"(?<![\d월])(?<!월\s)(\d{1,2})\s*일\s*(?:에|날|자에|자)")
"""A day of the month alone, as a player writes their own date: "the 2nd", "2일에 샀어요"."""
_NEXT_DAY = re.compile(
    r"내일|다음\s*날|자정|0시|tomorrow|next\s+day|midnight|daily|per\s+(?:calendar\s+)?day", re.I
)
"""Words of a daily cap's reset: the next calendar day is a window of one day."""


def player_days(text: str, today: date) -> set[date]:
    """The days of the month the player names without a month, in this month (or the last, when the day
    is still ahead)."""
    out = set()
    for m in [*_ORDINAL_EN.finditer(text), *_DAY_KO.finditer(text)]:
        day = int(m.group(1) or (m.group(2) if m.re is _ORDINAL_EN else 0) or 0)
        if not 1 <= day <= 31:
            continue
        month_start = today.replace(day=1)
        if day > today.day:
            month_start = (month_start - timedelta(days=1)).replace(day=1)
        try:
            out.add(month_start.replace(day=day))
        except ValueError:
            continue
    return out


@dataclass
class Calendar:
    """The dates and windows one run's evidence states, to back what an answer computes from them."""

    today: date | None = None
    anchors: set[date] = field(default_factory=set)
    """Dates written by a result, a passage, a notice or the player (and today)."""
    windows: set[int] = field(default_factory=set)
    """Durations (minutes) the evidence states: a policy's window, a coupon's validity."""
    spans: list[frozenset[tuple[int, int]]] = field(default_factory=list)
    """The times each sentence of the evidence states together (a notice's "02:00부터 06:00까지")."""
    date_spans: list[frozenset[date]] = field(default_factory=list)

    def add_text(self, text: str, *, player: bool = False) -> None:
        facts, next_day = _calendar_facts(text)
        self._add_facts(facts)
        if player and self.today is not None:
            self.anchors.update(player_days(text, self.today))
        if next_day:
            self.windows.add(DAY_MINUTES)

    def _add_facts(self, facts: Iterable[Fact]) -> None:
        times: set[tuple[int, int]] = set()
        dates: set[date] = set()
        for f in facts:
            if f.kind == DURATION:
                self.windows.add(int(f.value))
            elif f.kind == TIME:
                times.add(f.value)
            elif f.kind == DATE and self.today is not None and len(f.value) >= 5:
                d = resolve(f.value, self.today)
                if d is not None:
                    dates.add(d)
        self.anchors.update(dates)
        if len(times) >= 2:
            self.spans.append(frozenset(times))
        if len(dates) >= 2:
            self.date_spans.append(frozenset(dates))

    def backs_date(self, value: str, sentence_facts: Iterable[Fact] = ()) -> bool:
        """Whether the date is an anchor plus (or minus) a window the evidence states."""
        if self.today is None or len(value) < 5:
            return False
        wanted = resolve(value, self.today)
        if wanted is None:
            return False
        anchors = {self.today, *self.anchors}
        for f in sentence_facts:  # "2월 20일에 받으셨다면 3월 22일까지": the sentence's own start date
            if f.kind == DATE and f.value != value and len(f.value) >= 5:
                d = resolve(f.value, self.today)
                if d is not None:
                    anchors.add(d)
        return _reaches(anchors, self.windows, wanted)

    def backs_duration(self, minutes: int, sentence_facts: Iterable[Fact] = ()) -> bool:
        """Whether the duration is the distance between two times one sentence states (the evidence's
        or the answer's own), or between two dates (today and a date someone wrote)."""
        mine = [f for f in sentence_facts if f.kind in (TIME, DATE)]
        spans = list(self.spans)
        times = frozenset(f.value for f in mine if f.kind == TIME)
        if len(times) >= 2:
            spans.append(times)
        for span in spans:
            if minutes < 2 * 720 and _time_gap(span, minutes):
                return True
        if minutes % DAY_MINUTES or self.today is None:
            return False
        days = minutes // DAY_MINUTES
        dates = {self.today, *self.anchors}
        for f in mine:
            if f.kind == DATE and len(f.value) >= 5:
                d = resolve(f.value, self.today)
                if d is not None:
                    dates.add(d)
        return any(abs((d - self.today).days) == days for d in dates) or any(
            abs((a - b).days) == days for span in self.date_spans for a in span for b in span
        )


@lru_cache(maxsize=4096)
def _calendar_facts(text: str) -> tuple[tuple[Fact, ...], bool]:
    """(the dates, times and durations a text states, whether it speaks of a daily reset). Cached: the
    rules, passages and a thread's results are the same texts run after run. Read piece by piece
    (`calendar_pieces`: the same facts): a policy search's result is new text in most runs, while its
    sentences have been read already, by the evidence and by earlier runs (a new result's whole-text
    extraction cost ~1 ms of the loop)."""
    facts = tuple(
        f for piece in calendar_pieces(text) for f in extract_facts(piece) if f.kind in (DATE, TIME, DURATION)
    )
    return facts, bool(_NEXT_DAY.search(text))


def _time_gap(span: frozenset[tuple[int, int]], minutes: int) -> bool:
    """Times are kept on a 12-hour dial (`bot.guards.facts`): a gap is compared on it too."""
    points = [h * 60 + m for h, m in span]
    return any((b - a) % 720 == minutes % 720 and a != b for a in points for b in points)


def _reaches(anchors: set[date], windows: set[int], wanted: date) -> bool:
    for anchor in anchors:
        for minutes in windows:
            if minutes <= 0 or minutes % DAY_MINUTES:
                continue
            days = minutes // DAY_MINUTES
            if anchor + timedelta(days=days) == wanted or anchor - timedelta(days=days) == wanted:
                return True
            if minutes % MONTH_MINUTES == 0:
                months = minutes // MONTH_MINUTES
                if add_months(anchor, months) == wanted or add_months(anchor, -months) == wanted:
                    return True
    return False


# ---- weekday names ---------------------------------------------------------------------------------

_EN_DAYS = {
    "mon": 0, "monday": 0, "tue": 1, "tues": 1, "tuesday": 1, "wed": 2, "wednesday": 2, "thu": 3,
    "thur": 3, "thurs": 3, "thursday": 3, "fri": 4, "friday": 4, "sat": 5, "saturday": 5, "sun": 6,
    "sunday": 6,
}  # fmt: skip
_KO_DAYS = {"월": 0, "화": 1, "수": 2, "목": 3, "금": 4, "토": 5, "일": 6}
_EN_DAY = "|".join(sorted(_EN_DAYS, key=len, reverse=True))
_DAY_FIRST = "mtwfs"
"""The letters the English day names start with."""
_DATE_FIRST = r"\djfmasond"
"""What a date (`_DATE_TEXT`) starts with: a digit or a month name's first letter."""
_MONTH = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DATE_TEXT = (
    rf"(?:\d{{4}}\s*[-./]\s*\d{{1,2}}\s*[-./]\s*\d{{1,2}}|(?:\d{{4}}\s*년\s*)?\d{{1,2}}\s*월\s*\d{{1,2}}\s*일"
    rf"|(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTH})\.?(?:,?\s+\d{{4}})?)"
)
_WEEKDAY_AFTER = re.compile(
    # The lookaheads name the characters a date and a weekday's name start with: the same matches, but the
    # scan passes every other position at one character test.
    rf"(?=[{_DATE_FIRST}])(?P<d>{_DATE_TEXT})\s*(?:\*\*)?\s*(?:[(（,]\s*)?(?:(?P<ko>[월화수목금토일])(?:요일)?(?=\s*[)）])|(?P<kofull>[월화수목금토일])요일|\b(?P<en>{_EN_DAY})\b\.?)",
    re.IGNORECASE,
)
_WEEKDAY_BEFORE = re.compile(
    rf"\b(?=[{_DAY_FIRST}])(?P<en>{_EN_DAY})\b\.?,?\s+(?:the\s+)?(?P<d>{_DATE_TEXT})", re.IGNORECASE
)


_WEEKDAY_NEEDS = re.compile(r"[월화수목금토일](?:요일|\s*[)）])|\b(?:mon|tue|wed|thu|fri|sat|sun)")
"""Cheap test first (on the text case-folded): both weekday patterns need a weekday's name, and each
English name starts with one of these; a Korean one is "요일" or a day's syllable before a closing bracket
(the "일" of every "7일" is not); they need a date too, and every date has a digit."""
_DIGIT = re.compile(r"\d")


@lru_cache(maxsize=2048)
def _named_weekdays(text: str) -> tuple[tuple[str, str, int], ...]:
    if not _DIGIT.search(text) or not _WEEKDAY_NEEDS.search(fold_case(text)):
        return ()  # the two patterns scan at every position: ~40 µs a long sentence for nothing
    out = []
    for pattern in (_WEEKDAY_AFTER, _WEEKDAY_BEFORE):
        for m in pattern.finditer(text):
            said = m.groupdict()
            name = said.get("ko") or said.get("kofull")
            weekday = _KO_DAYS[name] if name else _EN_DAYS[fold_case(said["en"])]
            facts = [f for f in extract_facts(m.group("d")) if f.kind == DATE and len(f.value) >= 5]
            if facts:
                out.append((m.group(0), facts[0].value, weekday))
    return tuple(out)


def weekday_errors(text: str, today: date | None) -> list[tuple[str, str]]:
    """(the words, the weekday the date really falls on) for each weekday name written beside a date it
    does not fall on ("Tuesday, March 9" when March 9 is a Monday)."""
    if today is None:
        return []
    errors = []
    for words, value, weekday in _named_weekdays(text):
        d = resolve(value, today)
        if d is not None and d.weekday() != weekday:
            errors.append((words, d.strftime("%A")))
    return errors
