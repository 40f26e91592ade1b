"""The domain classifier of the abstain evidence (bot/knowledge/domain.py, issue 24)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bot.knowledge.domain import LOGIT_CLIP, DomainClassifier, domain_bank, fit_logistic
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.evaluation import load_eval_cases
from bot.knowledge.second_dense import USEEmbedder

TESTS = Path(__file__).resolve().parents[1]


def test_logistic_regression_separates_two_clusters() -> None:
    rng = np.random.default_rng(3)
    x = np.vstack([rng.normal(1.0, 0.3, (40, 4)), rng.normal(-1.0, 0.3, (60, 4))])
    y = np.asarray([1.0] * 40 + [0.0] * 60)
    w, b = fit_logistic(x, y)
    assert ((x @ w + b > 0) == (y > 0)).all()


def test_the_bank_is_large_bilingual_and_shares_no_line_with_an_eval_set() -> None:
    support, everyday = domain_bank()
    assert len(support) + len(everyday) >= 300
    hangul = [s for s in support + everyday if any("가" <= ch <= "힣" for ch in s)]
    assert 100 <= len(hangul) <= len(support) + len(everyday) - 100
    queries = {c.query.strip() for f in TESTS.glob("retrieval_*.yaml") for c in load_eval_cases(f)}
    assert not queries & set(support + everyday)
    assert "오늘 점심 뭐 먹을까요?" not in everyday  # the must-hold example stays unseen


def _bigrams(text: str) -> set[str]:
    squeezed = "".join(text.casefold().split()).strip("?!.~")
    return {squeezed[i : i + 2] for i in range(len(squeezed) - 1)}


def test_the_bank_holds_no_near_copy_of_an_eval_question() -> None:
    """A reworded copy teaches the classifier the very question it is then measured on: no bank line
    shares half its character pairs with any eval set's question (tuning sets included, so the
    cross-validated margins are not flattered either)."""
    questions = [
        (c.query, _bigrams(c.query)) for f in TESTS.glob("retrieval_*.yaml") for c in load_eval_cases(f)
    ]
    support, everyday = domain_bank()
    for line in support + everyday:
        grams = _bigrams(line)
        for query, other in questions:
            assert len(grams & other) < 0.5 * len(grams | other), (line, query)


def test_support_questions_score_above_small_talk_it_never_saw(e5: E5Embedder) -> None:
    classifier = DomainClassifier(e5)
    support = [
        "결제한 보석이 계정에 안 들어왔어요",
        "Can I get my money back for a skin I bought by mistake?",
    ]
    everyday = ["고양이 발톱은 몇 주마다 깎아야 해요?", "How many minutes should I steam broccoli?"]
    for s in support:
        for e in everyday:
            assert classifier.logit(e5.embed_query(s)) > classifier.logit(e5.embed_query(e)), (s, e)
    assert -LOGIT_CLIP <= classifier.logit(e5.embed_query(everyday[0])) < 0


class _CountingEmbedder:
    """A tiny embedder that counts its batches (two letters' counts as a vector)."""

    name = "counting-test-embedder"
    dim = 2

    def __init__(self) -> None:
        self.batches = 0

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        self.batches += 1
        return np.asarray([[t.count("a") + 1.0, t.count("e") + 1.0] for t in texts])


def test_every_index_of_a_process_shares_one_fit_per_embedding_model() -> None:
    embedder = _CountingEmbedder()
    first, second = DomainClassifier(embedder), DomainClassifier(embedder)  # e.g. a reindex
    first.logit(np.asarray([1.0, 1.0]))
    second.logit(np.asarray([1.0, 1.0]))
    assert embedder.batches == 1


def test_the_second_models_classifier_tells_english_support_from_everyday_questions(use: USEEmbedder) -> None:
    classifier = DomainClassifier(use)
    support = [
        "my pet dragon egg disappeared from my inventory",
        "I paid for the season pass but it is locked",
    ]
    everyday = ["how do I stop my glasses from fogging up", "what temperature should I bake cookies at"]
    for s in support:
        for e in everyday:
            assert classifier.logit(use.embed_query(s)) > classifier.logit(use.embed_query(e)), (s, e)
    assert classifier.logit(use.embed_query(everyday[0])) < 0 < classifier.logit(use.embed_query(support[1]))
