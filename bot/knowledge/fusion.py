"""Fusion of the dense (e5) and lexical (BM25) rankings, and the "no policy covers this" decision.

Both are rank- and share-based, never tied to one corpus's score scale, so they carry over to any
policy folder: reciprocal rank fusion orders the candidates, and the abstain evidence combines how
far the best passage stands out from the rest densely (`dense_margin`) with how much of the query's
rarer terms it contains (`coverage`). The constants are chosen on tests/retrieval_eval.yaml with
bench/retrieval.py --tune; the held-out set and the second corpus (tests/knowledge/other_game/) only
measure them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class FusionParams:
    """How the two rankings are combined and when the search abstains.

    Chosen on the tuning set (shipped corpus + its Korean-only copy, bench/retrieval.py --tune):
    `linear` beat reciprocal rank fusion there (R@1 0.67 vs 0.63 at its best k and weight; RRF lets
    the noisier lexical ranking move passages as much as the dense one), and the abstain threshold is
    the highest that wrongly abstains on at most 4 % of the tuning set's on-topic questions.
    """

    method: str = "linear"
    """`linear`: dense cosine + lexical_weight × BM25 / best BM25 of the query; `rrf`: reciprocal rank
    fusion, dense_weight/(rrf_k + dense rank) + lexical_weight/(rrf_k + lexical rank)."""
    rrf_k: float = 10.0
    dense_weight: float = 1.0
    lexical_weight: float = 0.02
    heading_weight: float = 1.0
    """Heading (title and `##` title) BM25 counts this much relative to the body's."""
    coverage_weight: float = 0.0
    """Evidence = dense_top − background_top + coverage_weight × coverage of the best passage (the
    coverage term did not separate the tuning set's off-topic queries any better, so it is off)."""
    abstain_below: float = -0.011
    """Below this evidence the search returns nothing ("no matching policy")."""

    def with_(self, **changes: Any) -> FusionParams:
        return replace(self, **changes)


DEFAULT_FUSION = FusionParams()


@dataclass(frozen=True)
class Candidate:
    chunk_id: str
    metadata: dict[str, Any]
    text: str
    dense: float
    """Cosine similarity of the query and passage vectors."""
    lexical: float
    """BM25 (body + weighted heading); 0 when no query term occurs."""


@dataclass(frozen=True)
class Ranked:
    candidate: Candidate
    score: float


@dataclass(frozen=True)
class Evidence:
    """Why a query is (or is not) about some policy."""

    dense_top: float
    dense_margin: float
    """Best dense similarity minus the mean over the dense candidates: an on-topic query has a passage
    that stands out; small talk is about equally (un)like everything."""
    coverage: float
    """Idf-weighted share of the query's terms present in the best fused passage."""
    background_top: float
    """Best similarity of the query to the everyday sentences of bot/knowledge/background.py."""

    def score(self, params: FusionParams) -> float:
        return self.dense_top - self.background_top + params.coverage_weight * self.coverage


def _ranks(values: Sequence[float], *, positive_only: bool) -> list[int | None]:
    order = sorted(range(len(values)), key=lambda i: values[i], reverse=True)
    ranks: list[int | None] = [None] * len(values)
    rank = 0
    for i in order:
        if positive_only and values[i] <= 0:
            continue
        rank += 1
        ranks[i] = rank
    return ranks


def fuse(candidates: Sequence[Candidate], params: FusionParams) -> list[Ranked]:
    """Candidates ordered by fusion of their dense and lexical evidence, best first."""
    if params.method == "linear":
        best = max((c.lexical for c in candidates), default=0.0)
        scored = [
            Ranked(
                c, params.dense_weight * c.dense + params.lexical_weight * (c.lexical / best if best else 0.0)
            )
            for c in candidates
        ]
        return sorted(scored, key=lambda r: (r.score, r.candidate.dense), reverse=True)
    dense_ranks = _ranks([c.dense for c in candidates], positive_only=False)
    lexical_ranks = _ranks([c.lexical for c in candidates], positive_only=True)
    ranked = []
    for c, rd, rl in zip(candidates, dense_ranks, lexical_ranks, strict=True):
        score = params.dense_weight / (params.rrf_k + (rd or 0))
        if rl is not None:
            score += params.lexical_weight / (params.rrf_k + rl)
        ranked.append(Ranked(c, score))
    ranked.sort(key=lambda r: (r.score, r.candidate.dense), reverse=True)
    return ranked


def dense_evidence(dense_scores: Sequence[float]) -> tuple[float, float]:
    """(best dense similarity, its margin over the mean of the dense candidates)."""
    if not dense_scores:
        return 0.0, 0.0
    top = max(dense_scores)
    return top, top - sum(dense_scores) / len(dense_scores)
