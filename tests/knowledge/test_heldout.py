"""Generalisation: the held-out sets (tests/retrieval_heldout.yaml, tests/retrieval_heldout_more.yaml,
tests/retrieval_heldout_third.yaml) and a second game's Korean-only corpus (tests/knowledge/other_game/, tests/retrieval_other_game.yaml),
none used for tuning.

Measured with the default embedders and fusion (`python bench/retrieval.py`, 2026-12-04):

    set                                R@1   R@3   AB@3  off-topic abstained   on-topic wrongly abstained
    held-out, shipped corpus           0.85  0.95  0.99  0.91                  0.00
    held-out second set, shipped       0.82  0.93  0.95  0.96                  0.02
    held-out third set, shipped        0.80  0.91  0.98  0.54                  0.00
    second corpus (other game)         0.93  0.97  1.00  1.00                  0.00
    farm corpus, held-out part         0.90  1.00  1.00  0.86                  0.00

(AB@3: answer-bearing recall@3, the section or the neighbour a top-3 hit carries.)

The floors below sit ~0.05–0.08 under those figures: they catch regressions, not run-to-run noise.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.knowledge.documents import chunk_documents, load_policies
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.evaluation import EvalCase, EvalReport, evaluate, load_eval_cases
from bot.knowledge.index import PolicyIndex
from bot.knowledge.second_dense import SecondDense, USEEmbedder
from tests.support.knowledge import assert_fresh_eval_set

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[1]
HELDOUT_FILE = TESTS / "retrieval_heldout.yaml"
HELDOUT_MORE_FILE = TESTS / "retrieval_heldout_more.yaml"
HELDOUT_THIRD_FILE = TESTS / "retrieval_heldout_third.yaml"
TUNING_MORE_FILE = TESTS / "retrieval_tuning_more.yaml"
OTHER_GAME = TESTS / "knowledge" / "other_game"
OTHER_GAME_FILE = TESTS / "retrieval_other_game.yaml"
FARM_EN_ANSWER_BEARING = 0.90


@pytest.fixture(scope="module")
def heldout_cases() -> list[EvalCase]:
    return load_eval_cases(HELDOUT_FILE)


@pytest.fixture(scope="module")
def other_index(
    e5: E5Embedder, use: USEEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PolicyIndex]:
    index = PolicyIndex(e5, chroma_dir=tmp_path_factory.mktemp("chroma-other-game"), second=SecondDense(use))
    index.build(OTHER_GAME)
    yield index
    index.close()


def test_heldout_set_is_large_varied_fresh_and_points_at_real_sections(
    heldout_cases: list[EvalCase], eval_cases: list[EvalCase]
) -> None:
    assert len(heldout_cases) + len(eval_cases) >= 120
    assert sum(c.off_topic for c in heldout_cases) >= 20
    assert sum(c.kind == "paraphrase" for c in heldout_cases) >= 20
    assert {"ko", "en"} == {c.lang for c in heldout_cases}
    assert_fresh_eval_set(heldout_cases, eval_cases)


@pytest.mark.timeout(900)  # 118 queries under two models: it took over 300 s on the loaded 2-core machine
def test_heldout_recall_and_abstain_rates(shipped_index: PolicyIndex, heldout_cases: list[EvalCase]) -> None:
    report = evaluate(shipped_index, heldout_cases, k=3)
    assert report.recall_at_k() >= 0.85, report.misses
    assert report.answer_bearing_recall() >= 0.90, report.misses
    assert report.recall_at_1() >= 0.76, report.misses
    # measured once (bench/retrieval.py): off-topic abstained 0.91, English 10 of 11 (6 of 11 before the
    # USE domain classifier); one case is 0.09
    assert report.off_topic_abstain_rate >= 0.85, report.misses
    assert report.off_topic_abstain_rate_of("en") >= 0.80, report.misses
    assert report.wrong_abstain_rate_of("ko") == report.wrong_abstain_rate_of("en") == 0.0, report.misses


def test_second_heldout_set_is_fresh_and_covers_every_document_in_both_languages(
    heldout_cases: list[EvalCase], eval_cases: list[EvalCase]
) -> None:
    more = load_eval_cases(HELDOUT_MORE_FILE)
    others = [*heldout_cases, *eval_cases, *load_eval_cases(TUNING_MORE_FILE)]
    sections = assert_fresh_eval_set(more, others)
    for lang in ("ko", "en"):
        on_topic = [c for c in more if c.lang == lang and not c.off_topic]
        assert len(on_topic) >= 63 and sum(c.lang == lang and c.off_topic for c in more) >= 20, lang
        assert {c.source for c in on_topic} == {s for s, _ in sections}, lang  # every document


def test_third_heldout_set_is_fresh_and_covers_every_document_in_both_languages(
    heldout_cases: list[EvalCase], eval_cases: list[EvalCase]
) -> None:
    third = load_eval_cases(HELDOUT_THIRD_FILE)
    others = [
        *heldout_cases,
        *eval_cases,
        *load_eval_cases(TUNING_MORE_FILE),
        *load_eval_cases(HELDOUT_MORE_FILE),
    ]
    sections = assert_fresh_eval_set(third, others)
    for lang in ("ko", "en"):
        on_topic = [c for c in third if c.lang == lang and not c.off_topic]
        assert len(on_topic) >= 75 and sum(c.lang == lang and c.off_topic for c in third) >= 20, lang
        assert {c.source for c in on_topic} == {s for s, _ in sections}, lang  # every document
    # every section was written for; the near-copies of other sets left out took the last question of 4
    # sections (90 of 94 are asked about)
    assert len({(c.source, c.section) for c in third if not c.off_topic}) >= len(sections) - 4


@pytest.mark.timeout(900)
def test_second_heldout_set_on_the_shipped_corpus(shipped_index: PolicyIndex) -> None:
    # measured once (bench/retrieval.py, 2026-12-04): R@1 0.82, answer-bearing R@3 0.95, off-topic
    # abstained 0.96, 2 of 126 on-topic questions wrongly abstained (one in each language)
    report = evaluate(shipped_index, load_eval_cases(HELDOUT_MORE_FILE), k=3)
    _assert_at_least(report, recall_at_1=0.76, answer_bearing=0.90, off_topic_abstained=0.90, wrong=0.04)


@pytest.mark.timeout(900)
def test_third_heldout_set_on_the_shipped_corpus(shipped_index: PolicyIndex) -> None:
    # measured once (bench/retrieval.py, 2026-12-04): R@1 0.80, answer-bearing R@3 0.98, no on-topic
    # question abstained; off-topic abstained 0.54 (small talk 16 of 19, homework 9 of 11, and none
    # of the 16 questions to other businesses' support desks)
    report = evaluate(shipped_index, load_eval_cases(HELDOUT_THIRD_FILE), k=3)
    _assert_at_least(report, recall_at_1=0.75, answer_bearing=0.93, off_topic_abstained=0.50, wrong=0.02)


def _assert_at_least(
    report: EvalReport, *, recall_at_1: float, answer_bearing: float, off_topic_abstained: float, wrong: float
) -> None:
    """The held-out floors of a report: recall, abstained off-topic, and at most `wrong` of each
    language's on-topic questions turned away."""
    assert report.recall_at_1() >= recall_at_1, report.misses
    assert report.answer_bearing_recall() >= answer_bearing, report.misses
    assert report.off_topic_abstain_rate >= off_topic_abstained, report.misses
    assert report.wrong_abstain_rate_of("ko") <= wrong and report.wrong_abstain_rate_of("en") <= wrong, (
        report.misses
    )


def test_second_corpus_of_another_game_carries_the_settings_over(other_index: PolicyIndex) -> None:
    cases = load_eval_cases(OTHER_GAME_FILE)
    chunks = chunk_documents(load_policies(OTHER_GAME))
    sections = {(c.source, c.section) for c in chunks}
    assert all(c.off_topic or (c.source, c.section) in sections for c in cases)
    assert all("> EN:" not in c.text for c in chunks)  # Korean-only documents
    report = evaluate(other_index, cases, k=3)
    assert report.recall_at_k() >= 0.88, report.misses
    assert report.recall_at_1() >= 0.75, report.misses
    assert report.off_topic_abstain_rate >= 0.85, report.misses
    assert report.wrong_abstain_rate == 0.0, report.misses


FARM_GAME = TESTS / "knowledge" / "farm_game"
FARM_TUNING_FILE = TESTS / "retrieval_farm_tuning.yaml"
FARM_HELDOUT_FILE = TESTS / "retrieval_farm_heldout.yaml"


@pytest.fixture(scope="module")
def farm_index(
    e5: E5Embedder, use: USEEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PolicyIndex]:
    index = PolicyIndex(e5, chroma_dir=tmp_path_factory.mktemp("chroma-farm"), second=SecondDense(use))
    index.build(FARM_GAME)
    yield index
    index.close()


def test_the_korean_only_farm_corpus_has_english_questions_and_a_held_out_part() -> None:
    tuning, heldout = load_eval_cases(FARM_TUNING_FILE), load_eval_cases(FARM_HELDOUT_FILE)
    chunks = chunk_documents(load_policies(FARM_GAME))
    sections = {(c.source, c.section) for c in chunks}
    assert all("> EN:" not in c.text for c in chunks) and len(sections) >= 20
    for cases in (tuning, heldout):
        assert sum(c.lang == "en" and not c.off_topic for c in cases) >= 20
        assert sum(c.off_topic for c in cases) >= 7
        assert all(c.off_topic or (c.source, c.section) in sections for c in cases)
    assert not {c.query.casefold() for c in tuning} & {c.query.casefold() for c in heldout}


def test_held_out_korean_only_corpus_never_turns_away_a_covered_question(farm_index: PolicyIndex) -> None:
    report = evaluate(farm_index, load_eval_cases(FARM_HELDOUT_FILE), k=3)
    assert report.wrong_abstain_rate_of("en") == 0.0 and report.wrong_abstain_rate_of("ko") == 0.0, (
        report.misses
    )
    assert report.answer_bearing_recall("en") >= FARM_EN_ANSWER_BEARING, report.misses
    assert report.recall_at_1("ko") >= 0.75, report.misses


def test_an_english_question_about_a_daily_limit_finds_the_korean_only_section(
    farm_index: PolicyIndex, korean_only_index: PolicyIndex
) -> None:
    hits = farm_index.search_sync("what's the daily limit for sending gifts?", top_k=3)
    assert ("mail.md", "2. 선물 보내기 한도") in [(h.source, h.section) for h in hits]
    hits = korean_only_index.search_sync("how many gifts can I send in one day?", top_k=3)
    given = [(h.source, h.section) for h in hits] + [(h.source, h.neighbour_section) for h in hits]
    assert ("gifts_trading.md", "2. 선물 한도") in given
    assert farm_index.search_sync("오늘 점심 뭐 먹을까요?", top_k=3) == []
