"""The one sentence splitter: lossless and stream-safe for the bot's answers, and a player's `…` read as a
pause inside their question, so a question about a rule is judged whole."""

from __future__ import annotations

import re

from bot.app import PROJECT_ROOT
from bot.engine.unasked import asks_for_compensation
from bot.vocabulary.sentences import player_sentences, prose_sentences, sentences, split_sentences
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


def test_a_policy_paragraph_wraps_its_lines_and_ends_sentences_at_punctuation_only() -> None:
    paragraph = (
        "환불은 구매 후 7일 이내에\n신청할 수 있습니다. 수수료는 5%입니다.\n단, 사용한 아이템은\n제외됩니다."
    )
    assert prose_sentences(paragraph) == [
        "환불은 구매 후 7일 이내에\n신청할 수 있습니다.",
        "수수료는 5%입니다.",
        "단, 사용한 아이템은\n제외됩니다.",
    ]
    assert sentences(paragraph)[0] == "환불은 구매 후 7일 이내에\n"  # an answer's line break does end


def test_the_shipped_policies_are_cut_as_before_the_one_splitter() -> None:
    """The policy chunker's own rule before it used the one splitter (whitespace after `.!?。`) cuts every
    paragraph of the shipped policies into the same sentences, so the index is unchanged."""
    before = re.compile(r"(?<=[.!?。])\s+")
    paragraphs = [
        p.strip()
        for path in sorted((PROJECT_ROOT / "policies").glob("*.md"))
        for p in re.split(r"\n\s*\n", path.read_text(encoding="utf-8"))
        if p.strip()
    ]
    assert len(paragraphs) > 100
    for paragraph in paragraphs:
        assert prose_sentences(paragraph) == [s.strip() for s in before.split(paragraph) if s.strip()]
