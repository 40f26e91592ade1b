"""Retrieval generalisation on the held-out set (tests/retrieval_heldout.yaml).

The lexical weight (0.03), the aliases and some policy sentences were tuned while looking at misses on
tests/retrieval_eval.yaml, so that set's recall@3 of 0.94 is optimistic. The held-out set was written
afterwards and never used for tuning; nothing was changed after scoring it.

Measured with the default embedder (e5, hybrid w=0.03, shipped policies; `python bench/retrieval.py`):

    set                          R@1 ko  R@1 en  R@1   R@3 ko  R@3 en  R@3
    tuned eval (64 queries)      0.66    0.78    0.72  0.94    0.94    0.94
    held-out (48 queries)        0.75    0.54    0.65  0.96    0.83    0.90

Held-out dense-only R@3 is 0.92 and the Korean-only corpus gives R@3 0.81. The floors below are 0.05 under
the measured value rounded down to 0.05 (0.896 -> 0.85 -> 0.80; ko 0.958 -> 0.90; en 0.833 -> 0.75): they
catch regressions, not run-to-run noise.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.knowledge.documents import chunk_documents, load_policies
from bot.knowledge.evaluation import EvalCase, evaluate, load_eval_cases
from bot.knowledge.index import PolicyIndex
from tests.knowledge.conftest import POLICIES

pytestmark = pytest.mark.slow

HELDOUT_FILE = Path(__file__).resolve().parents[1] / "retrieval_heldout.yaml"

RECALL_AT_3_FLOOR = 0.80
RECALL_AT_3_FLOOR_KO = 0.90
RECALL_AT_3_FLOOR_EN = 0.75


@pytest.fixture(scope="module")
def heldout_cases() -> list[EvalCase]:
    return load_eval_cases(HELDOUT_FILE)


def test_heldout_set_is_bilingual_fresh_and_points_at_real_sections(
    heldout_cases: list[EvalCase], eval_cases: list[EvalCase]
) -> None:
    assert len(heldout_cases) >= 40
    langs = [c.lang for c in heldout_cases]
    assert set(langs) == {"ko", "en"} and langs.count("ko") == langs.count("en")
    chunks = chunk_documents(load_policies(POLICIES))
    sections = {(c.source, c.section) for c in chunks}
    corpus = "\n".join(c.text for c in chunks)
    tuned = {c.query.casefold() for c in eval_cases}
    for case in heldout_cases:
        assert (case.source, case.section) in sections, case
        assert case.query.rstrip("?") not in corpus, f"copied from a document: {case.query}"
        assert case.query.casefold() not in tuned, f"also in the tuned eval set: {case.query}"
    assert len({c.query for c in heldout_cases}) == len(heldout_cases)


def test_heldout_recall_at_3_with_the_default_embedder(
    shipped_index: PolicyIndex, heldout_cases: list[EvalCase]
) -> None:
    report = evaluate(shipped_index, heldout_cases, k=3)
    assert report.recall_at_k() >= RECALL_AT_3_FLOOR, report.misses
    assert report.recall_at_k("ko") >= RECALL_AT_3_FLOOR_KO, report.misses
    assert report.recall_at_k("en") >= RECALL_AT_3_FLOOR_EN, report.misses
