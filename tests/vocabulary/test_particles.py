"""Korean particles after run-time words (issue 51): "장애 #3을", "답변 'sorry'를", never "을(를)"; and a
two-language staff reply shown in the staff member's language only in the console."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.staffroom.console.pages import in_one_language
from bot.vocabulary.catalogue import ORDER_NOT_FOUND, Text
from bot.vocabulary.particles import fitting_form, particle

ROOT = Path(__file__).resolve().parents[2]
FALLBACK = re.compile(r"[가-힣]?\((?:을|를|은|는|이|가|과|와|으)\)[가-힣]?")
"""`을(를)`, `(은)는`, `(으)로`…: what a sentence says when it did not pick the particle."""


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
        # a parenthetical at the end is set aside: the particle follows the word before it
        (
            "20,000원 쿠폰 ARCA-DEMO-2000 (만료 2026-12-29)",
            "이/가",
            "20,000원 쿠폰 ARCA-DEMO-2000 (만료 2026-12-29)이",
        ),
        ("쿠폰 A-9 (만료 3월 1일)", "이/가", "쿠폰 A-9 (만료 3월 1일)가"),
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


def test_a_text_field_may_name_its_particle() -> None:
    line = Text("주문 {order:을/를} 찾을 수 없습니다.", "Order {order} was not found.")
    assert line("ko", order="ORD003") == "주문 ORD003을 찾을 수 없습니다."
    assert line("ko", order="ORD2") == "주문 ORD2를 찾을 수 없습니다."
    assert line("en", order="ORD2") == "Order ORD2 was not found."
    line = Text("{a:이/가} {b:으로/로} {n:,}", "")
    assert line("ko", a="쿠폰", b="#7", n=20000) == "쿠폰이 #7로 20,000"


def test_a_missing_order_and_another_players_order_read_alike_but_for_the_id() -> None:
    # No particle after the id: it would differ between ids ("ORD003을", "ORD999를").
    assert ORDER_NOT_FOUND("ko", order_id="ORD003").replace("ORD003", "X") == ORDER_NOT_FOUND(
        "ko", order_id="ORD999"
    ).replace("ORD999", "X")


def test_no_sentence_in_the_code_falls_back_to_both_particles() -> None:
    found = []
    for folder in ("bot", "tools"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in {".py", ".js", ".html", ".yaml"} or path.name == "particles.py":
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if FALLBACK.search(line) and "never" not in line:
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


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
