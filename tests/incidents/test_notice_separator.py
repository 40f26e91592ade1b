"""`ko || en` in one line of text: the last separator splits, so a Korean notice may hold `||` itself, and
what the console joins is read back exactly."""

from __future__ import annotations

import pytest

from bot.incidents.notice import join_notice, split_notice


def test_one_separator_splits_korean_from_english() -> None:
    assert split_notice("배송이 늦어집니다 || Deliveries are late") == (
        "배송이 늦어집니다",
        "Deliveries are late",
    )
    assert split_notice("배송이 늦어집니다") == ("배송이 늦어집니다", "")


@pytest.mark.parametrize(
    ("ko", "en"),
    [
        ("A등급||B등급 상품의 배송이 늦어집니다.", ""),
        ("A등급||B등급 상품의 배송이 늦어집니다.", "Deliveries are late."),
        ("점검 중 || 표시는 무시하세요", "Ignore the marker"),
        ("공지", ""),
    ],
)
def test_a_joined_notice_reads_back_exactly_even_with_a_separator_in_korean(ko: str, en: str) -> None:
    assert split_notice(join_notice(ko, en)) == (ko, en)
