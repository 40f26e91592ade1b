"""The matcher for a plain request for a person: Korean and English phrasings match, questions that
merely mention people, negations and long messages do not."""

from __future__ import annotations

import pytest

from bot.desk.person_request import wants_person


@pytest.mark.parametrize(
    "text",
    [
        "상담원 연결",
        "상담원 연결해 주세요",
        "봇 말고 사람 상담원이랑 얘기하고 싶어요",
        "사람이랑 얘기하고 싶어요",
        "운영진 좀 불러 주세요",
        "상담사랑 통화할 수 있나요?",
        "상담원",
        "상담원요!",
        "talk to a person",
        "Can I speak to a human?",
        "I want to talk to a real person please",
        "connect me with an agent",
        "I need a human",
        "agent",
        "Live agent please",
    ],
)
def test_a_plain_request_for_a_person_matches(text: str) -> None:
    assert wants_person(text)


@pytest.mark.parametrize(
    "text",
    [
        "ORD001 배송이 너무 늦어요",
        "다른 사람이 제 계정으로 결제했어요",
        "상담원 연결은 필요 없어요, 쿠폰만 주세요",
        "사람 안 불러도 돼요",
        "I don't need to talk to a person",
        "no need for a human, just check ORD001",
        "where is my order ORD001?",
        "my friend is a real person who plays this game",
        "환불 정책이 어떻게 되나요?",
        "상담원 연결 " + "아주 긴 설명 " * 40,
        "",
    ],
)
def test_other_messages_do_not_match(text: str) -> None:
    assert not wants_person(text)
