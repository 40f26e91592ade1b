"""The one sentence splitter: lossless and stream-safe for the bot's answers, and a player's `…` read as a
pause inside their question, so a question about a rule is judged whole."""

from __future__ import annotations

from bot.engine.unasked import asks_for_compensation
from bot.vocabulary.sentences import player_sentences, sentences, split_sentences
from tools.requirements import is_policy_question


def test_split_sentences_is_lossless_and_keeps_the_unfinished_tail() -> None:
    text = "첫 문장입니다. 두 번째!\n세 번째 1.5배? 끝"
    parts, rest = split_sentences(text)
    assert "".join(parts) + rest == text
    assert parts == ["첫 문장입니다. ", "두 번째!\n", "세 번째 1.5배? "] and rest == "끝"


def test_a_stream_splits_as_the_whole_text_does() -> None:
    text = '확인했습니다… 주문은 "배송 지연"입니다. 보상은 최대 3장! 더 궁금한 점은?'
    done: list[str] = []
    buffer = ""
    for ch in text:
        parts, buffer = split_sentences(buffer + ch)
        done += parts
    assert [*done, buffer] == [*split_sentences(text)[0], split_sentences(text)[1]]
    assert sentences(text) == [
        "확인했습니다… ",
        '주문은 "배송 지연"입니다. ',
        "보상은 최대 3장! ",
        "더 궁금한 점은?",
    ]


def test_a_players_ellipsis_is_a_pause_not_the_end_of_their_question() -> None:
    assert player_sentences("환불 기한이… 어떻게 되나요?  쿠폰 주세요.\n") == [
        "환불 기한이… 어떻게 되나요?",
        "쿠폰 주세요.",
    ]
    assert is_policy_question("환불 기한이… 어떻게 되나요?")
    assert is_policy_question("The refund window… how long is it?")
    assert not asks_for_compensation("하루 쿠폰 한도가… 몇 장인가요?")
    assert asks_for_compensation("하루 쿠폰 한도가 몇 장인가요? 그럼 ORD101 쿠폰 주세요.")
