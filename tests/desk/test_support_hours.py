"""Staff hours: the next opening from a controlled clock (03:00 KST → 10:00 the same day; Friday night →
Monday; holidays skipped), the player's notice in Korean and English, and clear configuration errors."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.config import ConfigError, load_settings
from bot.desk.hours import SupportHours
from tests.support.context import make_ctx
from tools.base import Actor, ToolServices
from tools.registry import build_registry

KST = ZoneInfo("Asia/Seoul")
HOURS = SupportHours.parse("mon-fri 10:00-19:00; sat 10:00-14:00", KST)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_an_escalation_at_three_in_the_morning_is_told_the_opening_hour() -> None:
    now = at("2026-03-03T03:00:00+09:00")  # a Tuesday
    assert HOURS.next_opening(now) == datetime(2026, 3, 3, 10, 0, tzinfo=KST)
    assert (
        HOURS.notice(now, "ko")
        == "지금은 운영진 근무 시간이 아닙니다. 운영진은 3월 3일(화) 10:00(KST)부터 답변드립니다."
    )
    assert HOURS.notice(now, "en") == "Staff are away right now; they are back on Tue Mar 3 at 10:00 (KST)."


def test_the_clock_is_read_in_the_configured_zone() -> None:
    assert HOURS.next_opening(at("2026-03-02T18:00:00+00:00")) == datetime(2026, 3, 3, 10, 0, tzinfo=KST)


def test_inside_hours_there_is_no_notice() -> None:
    assert HOURS.notice(at("2026-03-03T10:00:00+09:00"), "ko") is None
    assert HOURS.notice(at("2026-03-07T13:59:00+09:00"), "en") is None  # Saturday's short window


def test_after_saturday_hours_staff_return_on_monday_and_holidays_are_skipped() -> None:
    assert HOURS.next_opening(at("2026-03-07T15:00:00+09:00")) == datetime(2026, 3, 9, 10, tzinfo=KST)
    off = replace(HOURS, holidays=frozenset({date(2026, 3, 9), date(2026, 3, 10)}))
    assert off.next_opening(at("2026-03-07T15:00:00+09:00")) == datetime(2026, 3, 11, 10, tzinfo=KST)


def test_unset_hours_mean_staff_are_always_in() -> None:
    assert SupportHours.parse("", KST).notice(at("2026-03-03T03:00:00+09:00"), "ko") is None


def test_settings_and_the_holidays_file(tmp_path) -> None:
    holidays = tmp_path / "holidays.txt"
    holidays.write_text("# 삼일절 대체공휴일\n2026-03-03\n\n", encoding="utf-8")
    settings = load_settings(
        ARCA_DATA_DIR=str(tmp_path),
        ARCA_SUPPORT_HOURS="mon-fri 10:00-19:00",
        ARCA_SUPPORT_HOLIDAYS=str(holidays),
    )
    hours = SupportHours.from_settings(settings)
    assert hours.next_opening(at("2026-03-03T03:00:00+09:00")) == datetime(2026, 3, 4, 10, tzinfo=KST)


@pytest.mark.parametrize(
    ("spec", "holidays", "says"),
    [
        ("weekdays 10-19", None, "e.g. 'mon-fri 10:00-19:00"),
        ("mon-fri 19:00-19:00", None, "starts and ends at the same time"),
        ("mon-fry 10:00-19:00", None, "days are mon"),
        ("mon-fri 10:00-19:00", "2026-13-01\n", "is not a YYYY-MM-DD date"),
        ("mon-fri 10:00-19:00", "missing", "No such file"),
    ],
)
def test_a_bad_value_is_one_clear_configuration_error(tmp_path, spec, holidays, says) -> None:
    path = tmp_path / "h.txt"
    if holidays is not None and holidays != "missing":
        path.write_text(holidays, encoding="utf-8")
    settings = load_settings(
        ARCA_DATA_DIR=str(tmp_path),
        ARCA_SUPPORT_HOURS=spec,
        ARCA_SUPPORT_HOLIDAYS=str(path) if holidays is not None else "",
    )
    with pytest.raises(ConfigError, match="ARCA_SUPPORT_HOURS") as err:
        SupportHours.from_settings(settings)
    assert says in str(err.value)


async def test_the_escalate_tool_tells_the_model_when_staff_return(seeded_store) -> None:
    ctx = make_ctx(
        Actor(discord_id="9001", player_id="P100"),
        store=seeded_store,
        thread_id="console:hours",
        run_id="r1",
        clock=lambda: at("2026-03-03T03:00:00+09:00"),
        services=ToolServices(away_notice=HOURS.notice),
        call_id="c1",
    )
    result = await build_registry().execute("escalate_to_staff", {"summary": "환불 문의"}, ctx)
    assert result.code == "OK" and "3월 3일(화) 10:00(KST)부터 답변드립니다" in result.message
    daytime = replace(ctx, clock=lambda: at("2026-03-03T11:00:00+09:00"), tool_call_id="c2")
    result = await build_registry().execute("escalate_to_staff", {"summary": "환불 문의"}, daytime)
    assert "근무 시간" not in result.message


async def test_doctor_reports_the_hours_and_a_bad_value(tmp_path) -> None:
    from bot.doctor import check_support_hours

    good = load_settings(
        ARCA_DATA_DIR=str(tmp_path),
        ARCA_SUPPORT_HOURS="mon-fri 10:00-19:00; sat 10:00-14:00",
        ARCA_SLA_FIRST_RESPONSE_MINUTES="2880",  # longer than the weekend away: the targets fit
        ARCA_SLA_RESOLUTION_MINUTES="2880",
    )
    check = await check_support_hours(good)
    assert check.status == "ok" and "6 day(s) a week in Asia/Seoul" in check.detail
    bad = await check_support_hours(load_settings(ARCA_DATA_DIR=str(tmp_path), ARCA_SUPPORT_HOURS="9 to 6"))
    assert bad.status == "fail" and "entry 1 is not days and hours" in bad.detail
    assert "9 to 6" not in bad.detail  # the value is not echoed (a secret in the wrong setting)
