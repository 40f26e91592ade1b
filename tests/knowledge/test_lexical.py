"""The lexical side: Korean morphemes, numbers with units, stemmed English, BM25 with a heading field."""

from __future__ import annotations

import random

import numpy as np

from bot.knowledge.analysis import analyze, keyword_head, korean_number
from bot.knowledge.lexical import LexicalIndex


def test_korean_is_split_into_morphemes_with_or_without_spaces() -> None:
    assert analyze("배송 지연 보상 쿠폰 한도") == ["배송", "지연", "보상", "쿠폰", "한도"]
    assert analyze("쿠폰한도가얼마예요")[:2] == ["쿠폰", "한도"]
    assert analyze("오늘 점심 뭐 먹을까요?") == ["오늘", "점심", "먹"]


def test_amounts_are_one_term_however_they_are_written() -> None:
    assert analyze("20,000원") == analyze("2만원") == analyze("이만 원") == ["20000원"]
    assert analyze("구천구백원") == ["9900원"]
    assert analyze("두 번 결제") == ["2회", "결제"]
    assert korean_number("이만오천") == 25_000 and korean_number("만") == 10_000
    assert korean_number("쿠폰") is None


def test_english_words_are_stemmed_and_stop_words_dropped() -> None:
    assert analyze("The suspension") == analyze("suspensions")
    assert analyze("refunds") == analyze("refund") == ["refund"]
    assert "the" not in analyze("what is the refund")


def test_a_heading_match_counts_more_with_a_heavier_heading_weight() -> None:
    index = LexicalIndex(
        ["limit", "delay"],
        [analyze("쿠폰 1장은 최대 20,000원입니다"), analyze("배송 지연 주문은 보상 쿠폰을 받습니다")],
        [analyze("보상 정책 발급 한도"), analyze("보상 정책 적용 대상")],
    )
    query = analyze("쿠폰 한도")
    light, heavy = index.scores(query, 0.0), index.scores(query, 2.0)
    assert heavy[0] - heavy[1] > light[0] - light[1]
    assert heavy[0] > heavy[1]
    assert not index.scores(analyze("전혀 관계없는 말"), 1.0).any()


def test_coverage_counts_terms_the_corpus_never_uses_as_rare() -> None:
    index = LexicalIndex(["hours"], [analyze("평일 10시부터 7시까지, 점심시간 제외")], [analyze("운영 시간")])
    assert index.coverage(analyze("오늘 점심 뭐 먹을까요"), "hours") < 0.5
    assert index.coverage(analyze("운영 시간"), "hours") == 1.0


def test_a_korean_keyword_query_has_its_last_noun_as_head() -> None:
    assert keyword_head("배송 지연 보상 쿠폰 한도") == "한도"
    assert keyword_head("보상쿠폰한도") == "한도"
    # a sentence, a single word or English has no head: its last noun is often not what it asks
    assert keyword_head("쿠폰 한도가 얼마예요?") is None
    assert keyword_head("한도") is None
    assert keyword_head("coupon limit") is None


def test_the_head_noun_counts_more_in_bm25() -> None:
    index = LexicalIndex(
        ["delay", "limit"],
        [analyze("배송 지연 보상 쿠폰 배송 지연"), analyze("보상 쿠폰 한도")],
        [analyze("배송 지연 기준"), analyze("발급 한도")],
    )
    query = analyze("배송 지연 보상 쿠폰 한도")
    plain = index.scores(query, 1.0)
    headed = index.scores(query, 1.0, head="한도", head_weight=2.0)
    assert plain[0] > plain[1]
    assert headed[1] > headed[0]


def test_bm25_scores_are_bm25s_own_to_the_last_bit() -> None:
    """The search adds bm25s's stored term columns itself; any query must score exactly as bm25s does."""
    rng = random.Random(7)
    words = [f"w{i}" for i in range(60)]
    docs = [[rng.choice(words) for _ in range(rng.randrange(0, 30))] for _ in range(40)]
    index = LexicalIndex([f"c{i}" for i in range(40)], docs, [d[:3] for d in docs])
    body = index._body
    assert body is not None and body._columns is not None  # the exact path is the one taken
    for _ in range(300):
        terms = [rng.choice(words) for _ in range(rng.randrange(1, 8))]
        ids = [body.vocab[t] for t in terms if t in body.vocab]
        ours = body.scores(ids, len(index))
        theirs = np.asarray(body.model.get_scores(ids), dtype=np.float32)
        assert ours.dtype == np.float32
        assert ours.tobytes() == theirs.tobytes(), ids
