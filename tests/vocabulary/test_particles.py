"""Korean particles after run-time words (issue 51): "장애 #3을", "답변 'sorry'를", never "을(를)"; and a
two-language staff reply shown in the staff member's language only in the console."""

from __future__ import annotations

import pytest

from bot.staffroom.console.pages import in_one_language
from bot.vocabulary.particles import fitting_form, particle


@pytest.mark.parametrize(
    ("word", "pair", "said"),
    [
        ("ORD003", "을/를", "ORD003을"),  # 삼
        ("#2", "을/를", "#2를"),  # 이
        ("P100", "을/를", "P100을"),  # 백
        ("#9", "이/가", "#9가"),  # 구
        ("'sorry'", "을/를", "'sorry'를"),
        ("'지연'", "을/를", "'지연'을"),
        ("사과", "을/를", "사과를"),
        ("Mina", "은/는", "Mina는"),
        ("Jun", "은/는", "Jun은"),
        ("#7", "으로/로", "#7로"),  # 칠: ㄹ takes 로
        ("#3", "으로/로", "#3으로"),
        ("서울", "으로/로", "서울로"),
        ("ORD1", "과/와", "ORD1과"),
    ],
)
def test_the_particle_fits_how_the_word_is_read(word: str, pair: str, said: str) -> None:
    assert particle(word, pair) == said


def test_a_two_language_reply_is_shown_in_one_language() -> None:
    text = "⚠ 플레이어 P9를 찾을 수 없습니다. / No player P9."
    assert in_one_language(text, "ko") == "⚠ 플레이어 P9를 찾을 수 없습니다."
    assert in_one_language(text, "en") == "⚠ No player P9."
    assert in_one_language("[ISSUED] 쿠폰을 발급했습니다", "en") == "[ISSUED] 쿠폰을 발급했습니다"
    assert in_one_language("첫 줄 / first\n둘째 줄", "en") == "첫 줄 / first\n둘째 줄"  # lists stay whole


@pytest.mark.parametrize(
    ("word", "written", "said"),
    [
        ("주문 조회", "를", "를"),
        ("쿠폰 발급", "를", "을"),
        ("운영진", "가", "이"),
        ("정책 검색", "로", "으로"),
        ("주문 목록", "으로", "으로"),
        ("장애 공지", "으로", "로"),
        ("'지연'", "를", "을"),
        ("주문 번호", "도", "도"),
    ],
)
def test_a_written_particle_takes_the_form_that_fits_the_word_put_before_it(
    word: str, written: str, said: str
) -> None:
    assert fitting_form(word, written) == said
