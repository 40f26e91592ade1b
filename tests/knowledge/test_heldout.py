"""Generalisation: the held-out set (tests/retrieval_heldout.yaml) and a second game's Korean-only
corpus (tests/knowledge/other_game/, tests/retrieval_other_game.yaml), neither used for tuning.

Measured with the default embedder and fusion (`python bench/retrieval.py`):

    set                                R@1   R@3   off-topic abstained   on-topic wrongly abstained
    held-out, shipped corpus           0.81  0.91  0.77                  0.00
    second corpus (other game)         0.80  0.93  1.00                  0.00

The floors below sit ~0.05–0.08 under those figures: they catch regressions, not run-to-run noise.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.knowledge.documents import chunk_documents, load_policies
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.evaluation import EvalCase, evaluate, load_eval_cases
from bot.knowledge.index import PolicyIndex
from tests.knowledge.conftest import POLICIES

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[1]
HELDOUT_FILE = TESTS / "retrieval_heldout.yaml"
OTHER_GAME = TESTS / "knowledge" / "other_game"
OTHER_GAME_FILE = TESTS / "retrieval_other_game.yaml"


@pytest.fixture(scope="module")
def heldout_cases() -> list[EvalCase]:
    return load_eval_cases(HELDOUT_FILE)


@pytest.fixture(scope="module")
def other_index(e5: E5Embedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PolicyIndex]:
    index = PolicyIndex(e5, chroma_dir=tmp_path_factory.mktemp("chroma-other-game"))
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
    chunks = chunk_documents(load_policies(POLICIES))
    sections = {(c.source, c.section) for c in chunks}
    corpus = "\n".join(c.text for c in chunks)
    tuned = {c.query.casefold() for c in eval_cases}
    for case in heldout_cases:
        assert case.off_topic or (case.source, case.section) in sections, case
        assert case.query.rstrip("?") not in corpus, f"copied from a document: {case.query}"
        assert case.query.casefold() not in tuned, f"also in the tuning set: {case.query}"
    assert len({c.query for c in heldout_cases}) == len(heldout_cases)


def test_heldout_recall_and_abstain_rates(shipped_index: PolicyIndex, heldout_cases: list[EvalCase]) -> None:
    report = evaluate(shipped_index, heldout_cases, k=3)
    assert report.recall_at_k() >= 0.85, report.misses
    assert report.recall_at_1() >= 0.73, report.misses
    assert report.off_topic_abstain_rate >= 0.70, report.misses
    assert report.wrong_abstain_rate <= 0.04, report.misses


def test_second_corpus_of_another_game_carries_the_settings_over(other_index: PolicyIndex) -> None:
    cases = load_eval_cases(OTHER_GAME_FILE)
    chunks = chunk_documents(load_policies(OTHER_GAME))
    sections = {(c.source, c.section) for c in chunks}
    assert all(c.off_topic or (c.source, c.section) in sections for c in cases)
    assert all("> EN:" not in c.text for c in chunks)  # Korean-only documents
    report = evaluate(other_index, cases, k=3)
    assert report.recall_at_k() >= 0.85, report.misses
    assert report.recall_at_1() >= 0.72, report.misses
    assert report.off_topic_abstain_rate >= 0.85, report.misses
    assert report.wrong_abstain_rate <= 0.05, report.misses
