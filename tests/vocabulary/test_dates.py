"""Dates as staff and players read them (issue 51): `3월 3일(화) 14:05` / `Tue Mar 3 14:05` in the service
time zone, from one formatter; and the staff texts that carry a date use it (never a raw ISO stamp, a
UTC time shown as local, or a US date)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from bot.incidents.report import format_report
from bot.staffroom.discord_staff.channel import format_staff_notice
from bot.vocabulary.dates import day_text, day_time_text, zoned_text

SEOUL = "Asia/Seoul"
AT = datetime(2026, 3, 3, 5, 5, tzinfo=UTC)  # 14:05 on Tuesday 3 March in Seoul


def test_a_time_is_written_in_the_readers_language_and_the_service_zone() -> None:
    assert day_time_text(AT, "ko", SEOUL) == "3월 3일(화) 14:05"
    assert day_time_text(AT, "en", SEOUL) == "Tue Mar 3 14:05"
    assert day_time_text(AT, "ko", SEOUL, year=True) == "2026년 3월 3일(화) 14:05"
    assert day_time_text(AT, "en", SEOUL, year=True) == "Tue Mar 3, 2026 14:05"
    assert zoned_text(AT, "ko", SEOUL) == "3월 3일(화) 14:05 KST"
    assert zoned_text(AT, "en", None) == "Tue Mar 3 05:05 UTC"


def test_the_day_is_the_one_the_reader_lives_in() -> None:
    late = datetime(2026, 3, 2, 16, 30, tzinfo=UTC)  # already Tuesday in Seoul
    assert day_text(late, "ko", SEOUL) == "3월 3일(화)"
    assert day_text(date(2026, 12, 31), "en", year=True) == "Thu Dec 31, 2026"


def test_an_sla_reminder_in_discord_shows_its_due_time_as_a_discord_timestamp() -> None:
    text = format_staff_notice(
        "sla",
        {
            "escalation_id": 4,
            "thread_id": "discord:1",
            "target": "first_response",
            "due_at": AT.isoformat(),
            "minutes_left": 5,
        },
    )
    assert f"<t:{int(AT.timestamp())}:f>" in text and "2026-03-03T" not in text


def test_the_incident_report_gives_its_times_in_the_service_zone() -> None:
    report = {
        "id": 3,
        "title": "로그인 장애",
        "status": "closed",
        "started_at": AT.isoformat(),
        "ended_at": None,
        "compensation": {"budget": None, "players_compensated": 0, "orders_compensated": 0, "krw_spent": 0},
        "exclusions": {},
        "conversations": 0,
        "bot_resolved": 0,
        "thumbs_up": 0,
        "thumbs_down": 0,
    }
    first = format_report(report, SEOUL).splitlines()[0]
    assert "2026년 3월 3일(화) 14:05 KST → 진행 중 / open" in first and "T05:05" not in first
