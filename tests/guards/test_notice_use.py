"""An answer relays an incident's notice when it repeats one of the notice's facts about the same thing,
or most of a fact-less notice sentence; courtesy and answers about something else relay nothing."""

from __future__ import annotations

import pytest

from bot.guards.notice_use import relays_notice

LATE = ("택배사 사정으로 배송이 3일 늦어집니다.", "Deliveries are 3 days late.")
SERVER = ("서버는 15시에 열립니다.", "The server opens at 15:00.")
FACTLESS = (
    "현재 서버 점검이 연장되고 있습니다. 불편을 드려 죄송합니다.",
    "Server maintenance has been extended. We are sorry for the inconvenience.",
)


@pytest.mark.parametrize(
    ("answer", "notice"),
    [
        ("공지에 따르면 배송이 3일 정도 늦어집니다. 양해 부탁드립니다.", LATE),
        ("Your delivery is about 3 days late, sorry.", LATE),
        ("서버는 오늘 15시에 열릴 예정입니다.", SERVER),
        ("지금 서버 점검이 연장되고 있어요.", FACTLESS),
        ("Server maintenance was extended.", FACTLESS),
    ],
)
def test_an_answer_that_repeats_the_notice_relays_it(answer: str, notice: tuple[str, str]) -> None:
    assert relays_notice(answer, notice)


@pytest.mark.parametrize(
    ("answer", "notice"),
    [
        ("비밀번호는 게임 설정 메뉴에서 바꿀 수 있습니다.", LATE),
        ("쿠폰은 3일 안에 사용해 주세요.", LATE),  # the same figure about something else
        ("서버 언제 열려요?", SERVER),  # the subject without the notice's fact
        ("불편을 드려 죄송합니다. 감사합니다.", FACTLESS),  # courtesy every answer has
        ("We are sorry for the inconvenience.", FACTLESS),
        ("", LATE),
    ],
)
def test_an_answer_about_something_else_or_only_courtesy_does_not(
    answer: str, notice: tuple[str, str]
) -> None:
    assert not relays_notice(answer, notice)
