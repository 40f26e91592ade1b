"""Staff hours as Korean operators write them (issue 51): Korean day names, hours past midnight, a value
of separators only refused instead of meaning "always in", errors that never echo the value, the hours
in words, and SLA targets the hours cannot meet reported by `doctor` and at start-up."""

from __future__ import annotations

import logging
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.analytics.staff_response import SlaTargets
from bot.config import ConfigError, load_settings
from bot.desk.hours import SupportHours
from bot.desk.sla import hours_problems

KST = ZoneInfo("Asia/Seoul")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.mark.parametrize(
    "spec",
    [
        "월-금 10:00-19:00; 토 10:00-14:00",
        "월요일-금요일 10:00-19:00; 토요일 10:00-14:00",
        "월~금 10:00~19:00; 토 10:00~14:00",
        "평일 10:00-19:00; 토 10:00-14:00",
        "월,화,수,목,금 10:00-19:00; sat 10:00-14:00",
        "MON-FRI 10:00-19:00; Sat 10:00-14:00",
    ],
)
def test_korean_day_names_mean_the_same_hours_as_english_ones(spec: str) -> None:
    english = SupportHours.parse("mon-fri 10:00-19:00; sat 10:00-14:00", KST)
    assert SupportHours.parse(spec, KST).windows == english.windows


def test_weekend_is_saturday_and_sunday() -> None:
    assert sorted(SupportHours.parse("주말 10:00-14:00", KST).windows) == [5, 6]


def test_overnight_hours_run_into_the_next_morning() -> None:
    night = SupportHours.parse("월-금 22:00-06:00", KST)
    assert night.next_opening(at("2026-03-03T23:30:00+09:00")) is None  # Tuesday night
    assert night.next_opening(at("2026-03-04T05:59:00+09:00")) is None  # Wednesday before six
    assert night.next_opening(at("2026-03-04T06:00:00+09:00")) == datetime(2026, 3, 4, 22, tzinfo=KST)
    # Friday night's window runs into Saturday; Saturday night has none: back on Monday 22:00.
    assert night.next_opening(at("2026-03-07T05:00:00+09:00")) is None
    assert night.next_opening(at("2026-03-07T07:00:00+09:00")) == datetime(2026, 3, 9, 22, tzinfo=KST)


def test_a_window_belongs_to_the_day_it_starts_on_holidays_too() -> None:
    night = SupportHours.parse("월-금 22:00-06:00", KST, frozenset({datetime(2026, 3, 4).date()}))
    assert night.next_opening(at("2026-03-04T05:00:00+09:00")) is None  # Tuesday's window, into the holiday
    assert night.next_opening(at("2026-03-04T21:00:00+09:00")) == datetime(2026, 3, 5, 22, tzinfo=KST)


def test_sunday_night_runs_into_monday() -> None:
    hours = SupportHours.parse("sun 20:00-02:00", KST)
    assert hours.next_opening(at("2026-03-09T01:59:00+09:00")) is None  # Monday 01:59
    assert hours.next_opening(at("2026-03-09T02:00:00+09:00")) == datetime(2026, 3, 15, 20, tzinfo=KST)


@pytest.mark.parametrize("spec", [";", ";;;", " ; ; "])
def test_separators_alone_are_refused_not_always_open(tmp_path, spec: str) -> None:
    settings = load_settings(ARCA_DATA_DIR=str(tmp_path), ARCA_SUPPORT_HOURS=spec)
    with pytest.raises(ConfigError, match="separators but no hours; leave it empty"):
        SupportHours.from_settings(settings)


def test_empty_hours_still_mean_always_in_and_a_trailing_separator_is_fine() -> None:
    assert SupportHours.parse("", KST).always_open
    assert (
        SupportHours.parse("mon-fri 10:00-19:00;", KST).windows
        == SupportHours.parse("mon-fri 10:00-19:00", KST).windows
    )


SECRET = "sk-live-4f9c2e7a1b8d6f3e"


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        (SECRET, "entry 1 is not days and hours"),
        (f"mon-fri 10:00-19:00; {SECRET} 10:00-11:00", "entry 2 names an unknown day"),
        (f"mon-fri 10:00-19:00; {SECRET}", "entry 2 is not days and hours"),
        ("mon 10:00-10:00", "entry 1 starts and ends at the same time"),
        ("mon 25:00-26:00", "entry 1 has a time that is not a clock time"),
    ],
)
def test_an_error_names_the_entry_and_never_echoes_the_value(tmp_path, spec: str, says: str) -> None:
    settings = load_settings(ARCA_DATA_DIR=str(tmp_path), ARCA_SUPPORT_HOURS=spec)
    with pytest.raises(ConfigError) as err:
        SupportHours.from_settings(settings)
    assert says in str(err.value)
    assert SECRET not in str(err.value) and "sk-live" not in str(err.value)
    assert "25:00" not in str(err.value)


def test_the_hours_in_words_in_korean_and_english() -> None:
    hours = SupportHours.parse("mon-fri 10:00-19:00; sat 10:00-14:00; sun 22:00-06:00", KST)
    assert hours.describe("ko") == ["월–금 10:00–19:00", "토 10:00–14:00", "일 22:00–다음 날 06:00"]
    assert hours.describe("en") == ["Mon–Fri 10:00–19:00", "Sat 10:00–14:00", "Sun 22:00–next day 06:00"]
    assert SupportHours.parse("", KST).describe("ko") == ["항상 근무(설정 없음)"]


def test_the_longest_time_away_spans_the_weekend_and_ignores_holidays() -> None:
    office = SupportHours.parse("mon-fri 10:00-19:00; sat 10:00-14:00", KST)
    assert office.longest_away() == timedelta(hours=44)  # Saturday 14:00 → Monday 10:00
    off = SupportHours.parse("mon-fri 10:00-19:00", KST, frozenset({datetime(2024, 1, 2).date()}))
    assert off.longest_away() == timedelta(hours=63)  # Friday 19:00 → Monday 10:00
    assert SupportHours.parse("mon-sun 00:00-24:00", KST).longest_away() < timedelta(minutes=1)
    assert SupportHours.parse("", KST).longest_away() == timedelta(0)
    assert SupportHours.parse("월-일 22:00-06:00", KST).windows[0] == [(time(22), time(6))]
    assert SupportHours.parse("월-일 22:00-06:00", KST).longest_away() == timedelta(hours=16)


def test_sla_targets_shorter_than_the_time_away_are_named() -> None:
    office = SupportHours.parse("mon-fri 10:00-19:00", KST)
    problems = hours_problems(
        office, SlaTargets(first_response=timedelta(hours=1), resolution=timedelta(days=3))
    )
    assert len(problems) == 1
    assert "ARCA_SLA_FIRST_RESPONSE_MINUTES (1 h 00 min)" in problems[0]
    assert "63 h 00 min" in problems[0] and "at least 3780 minutes" in problems[0]
    assert hours_problems(SupportHours.parse("", KST), SlaTargets()) == []
    roomy = SlaTargets(first_response=timedelta(hours=64), resolution=timedelta(hours=64))
    assert hours_problems(office, roomy) == []


async def test_doctor_warns_when_the_targets_do_not_fit_the_hours(tmp_path) -> None:
    from bot.doctor import check_support_hours

    tight = load_settings(ARCA_DATA_DIR=str(tmp_path), ARCA_SUPPORT_HOURS="월-금 10:00-19:00")
    check = await check_support_hours(tight)
    assert check.status == "warn" and "ARCA_SLA_FIRST_RESPONSE_MINUTES" in check.detail
    assert "ARCA_SLA_RESOLUTION_MINUTES" in check.detail  # 24 h is shorter than the weekend too
    fits = load_settings(
        ARCA_DATA_DIR=str(tmp_path),
        ARCA_SUPPORT_HOURS="월-일 00:00-24:00",
    )
    assert (await check_support_hours(fits)).status == "ok"


async def test_the_bot_logs_unreachable_targets_at_start_up(tmp_path, seeded_store, caplog) -> None:
    from bot.app import build_app
    from bot.llm.scripted import ScriptedLLM
    from tests.fakes.knowledge import EmptyPolicyIndex

    settings = load_settings(ARCA_DATA_DIR=str(tmp_path), ARCA_SUPPORT_HOURS="월-금 10:00-19:00")
    with caplog.at_level(logging.WARNING):
        await build_app(
            settings, llm_factory=lambda: ScriptedLLM([]), store=seeded_store, policy_index=EmptyPolicyIndex()
        )
    assert "ARCA_SLA_FIRST_RESPONSE_MINUTES" in caplog.text and "docs/staff-hours.md" in caplog.text
