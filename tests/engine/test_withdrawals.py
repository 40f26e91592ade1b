"""Which mid-run messages take the request back (`bot.engine.withdrawals`): the run's question never does,
an order's status ("주문 취소") is not a withdrawal, and a later message that asks again wins."""

from __future__ import annotations

import pytest

from bot.engine.withdrawals import withdrawal

QUESTION = "ORD001 2만원 보상 쿠폰 발급해 주세요"


@pytest.mark.parametrize(
    "said",
    [
        "취소할게요, 쿠폰 발급하지 마세요",
        "취소요",
        "발급하지 말아 주세요",
        "그만하세요",
        "쿠폰 필요 없어요",
        "Cancel that, please",
        "never mind",
        "Don't issue it",
        "stop",
        "Stop, don't issue anything",
        "쿠폰 안 받을게요. 발급하지 마세요",
        "좋아요, 근데 그냥 취소할게요",
    ],
)
def test_a_mid_run_message_that_takes_the_request_back(said: str) -> None:
    assert withdrawal([QUESTION, said]) == said


@pytest.mark.parametrize(
    "said",
    [
        "빨리 부탁해요",
        "아 그리고 ORD004도 같이 봐주세요",
        "ORD003은 주문 취소된 건이에요",
        "ORD002도 배송 지연됐어요",
        "지연 보상으로 5천원 쿠폰도 부탁해요",
        "The delivery stopped moving",
        # issue 50: plain requests misread as withdrawals
        "please give me the coupon for ORD001, the game won't stop crashing",
        "Please give me the coupon... it won't stop crashing",
        "안 해도 되는 건가요? 빨리 해주세요",
        "발급 안 해도 되는 건가요? 빨리 해주세요",
        "쿠폰 필요 없는 건가요?",
    ],
)
def test_a_mid_run_message_that_does_not(said: str) -> None:
    assert withdrawal([QUESTION, said]) is None


def test_the_question_itself_never_withdraws() -> None:
    assert withdrawal(["지난번 쿠폰은 취소하고 ORD001 보상 부탁해요"]) is None


def test_a_later_message_that_asks_again_wins() -> None:
    assert withdrawal([QUESTION, "취소할게요", "아니에요, 그냥 발급해 주세요"]) is None
    assert withdrawal([QUESTION, "취소하지 말고 그냥 발급해 주세요"]) is None
    assert withdrawal([QUESTION, "go ahead", "never mind"]) == "never mind"
