"""The conversation's language (DESIGN.md §5) and the bilingual catalogue."""

from __future__ import annotations

import pytest

from bot.vocabulary.catalogue import ACCOUNT_NOT_LINKED, Text, say
from bot.vocabulary.language import detect_language


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("배송이 늦어요", "ko"),
        ("ORD001 상태 알려줘", "ko"),
        ("ㅠㅠ", "ko"),  # compatibility jamo alone is still Hangul
        ("\u1100\u1161", "ko"),  # conjoining jamo
        ("where is my order", "en"),
        ("ORD001", "en"),
        ("注文はどこ", "en"),  # not Hangul → English, whatever else it is
        ("", "en"),
        (None, "en"),
    ],
)
def test_hangul_means_korean_and_everything_else_english(text: str | None, expected: str) -> None:
    assert detect_language(text) == expected


def test_a_text_fills_the_template_of_the_conversation_language() -> None:
    greeting = Text("{name}님 안녕하세요", "Hello {name}")
    assert greeting("ko", name="루나") == "루나님 안녕하세요"
    assert greeting("en", name="Luna") == "Hello Luna"
    assert say(None, "한국어", "English") == "English"


def test_not_linked_sentence_says_what_is_blocked_and_how_to_link_in_both_languages() -> None:
    ko = ACCOUNT_NOT_LINKED("ko", blocked="쿠폰을 발급할 수 없습니다", more="")
    en = ACCOUNT_NOT_LINKED("en", blocked="no coupon can be issued", more="")
    assert "연동되어 있지 않아 쿠폰을 발급할 수 없습니다" in ko and "/link" in ko
    assert "not linked to a game account, so no coupon can be issued" in en and "/link" in en


def test_not_linked_sentence_also_tells_a_web_visitor_what_to_do() -> None:
    # The same sentence reaches Discord users and anonymous web visitors: neither may be told to do
    # something that only exists in the other channel.
    ko = ACCOUNT_NOT_LINKED("ko", blocked="주문을 조회할 수 없습니다", more="")
    en = ACCOUNT_NOT_LINKED("en", blocked="orders cannot be looked up", more="")
    assert "웹" in ko and "디스코드 계정은" not in ko
    assert "website" in en and "This Discord account" not in en
