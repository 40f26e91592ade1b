"""Personal data redaction (bot.guards.pii): other people's phone numbers, e-mails, card and resident
registration numbers are hidden; the actor's own contact details, ids, amounts and codes are not."""

from __future__ import annotations

import pytest

from bot.guards.pii import redact_pii


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("연락처는 010-9876-5432 입니다", "phone"),
        ("전화 01098765432 로 주세요", "phone"),
        ("call +82 10-9876-5432 now", "phone"),
        ("사무실 02-123-4567", "phone"),
        ("메일 other.person@example.org 로", "email"),
        ("카드 4111 1111 1111 1111 로 결제", "card"),
        ("카드번호 5500-0000-0000-0004", "card"),
        ("주민번호 900101-1234567 확인", "rrn"),
    ],
)
def test_other_peoples_personal_data_is_redacted(text: str, kind: str) -> None:
    out, kinds = redact_pii(text, own_phones=["010-1111-2222"], own_emails=["luna@example.com"])
    assert kinds == [kind]
    assert "비공개" in out


def test_the_actors_own_phone_and_email_pass() -> None:
    text = "등록된 연락처 010-1111-2222, 메일 Luna@Example.com 으로 안내드릴게요."
    out, kinds = redact_pii(text, own_phones=["+82 10-1111-2222"], own_emails=["luna@example.com"])
    assert out == text and kinds == []


@pytest.mark.parametrize(
    "text",
    [
        "주문 ORD001 금액 39,000원, 쿠폰 ARCA-7K2P-9XQM, 유효기간 2026-04-01까지.",
        "Order ORD001 costs 39,000 KRW; 20000 is the limit.",
        "카드 1234 5678 9012 3456 은 형식만 맞는 번호",  # fails the Luhn check: not a card
    ],
)
def test_ids_amounts_dates_and_codes_are_not_mistaken_for_personal_data(text: str) -> None:
    out, kinds = redact_pii(text)
    assert out == text and kinds == []


def test_discord_mention_ids_are_not_mistaken_for_card_numbers() -> None:
    text = "<@&820000000000000001> <@4111111111111111> <#4111111111111111>"
    assert redact_pii(text, locale="ko")[0] == text
    assert "4111" not in redact_pii("카드 4111 1111 1111 1111 로 결제", locale="ko")[0]
