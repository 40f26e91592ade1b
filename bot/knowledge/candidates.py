"""The candidate passages of one query: the dense top list ∪ the lexical top list (∪ the second dense
model's top list), each candidate with every raw score the fusion combines."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bot.knowledge.chroma import ChunkSnapshot, Nearest
from bot.knowledge.fusion import Candidate
from bot.knowledge.indexing import QUESTIONS_KEY
from bot.knowledge.lexical import LexicalIndex
from bot.knowledge.second_dense import SecondScores

CANDIDATES = 40
"""How many dense and how many lexical candidates are fused; far more than any top_k we serve."""


_NONE = np.zeros(0, dtype=np.float64)


@dataclass(frozen=True)
class CandidateSet:
    """A query's candidates and the pools their scores are standardised with (`fusion.fuse`)."""

    candidates: list[Candidate]
    dense_pool: list[float]
    """Dense similarity of the dense top list."""
    lexical_pool: np.ndarray
    """BM25 of every chunk."""
    second_pool: np.ndarray = field(default_factory=lambda: _NONE)
    """Second-model similarity of every chunk (empty without a second model)."""
    plain_pool: np.ndarray = field(default_factory=lambda: _NONE)
    """Second-model similarity of every chunk's text without its questions: the abstain evidence's
    (empty without a second model)."""
    plain: list[float] = field(default_factory=list)
    """That similarity of each candidate, in `candidates` order (empty without a second model)."""


def gather(
    chunks: ChunkSnapshot,
    lexical: LexicalIndex,
    collection: Any,
    found: Nearest,
    vector: np.ndarray,
    bm25: np.ndarray,
    second: SecondScores | None = None,
) -> CandidateSet:
    """Candidates from the dense neighbours `found`, the best BM25 chunks and the best second-model
    chunks; a candidate one list missed gets its dense similarity from the stored vector."""
    ids, distances = found
    chunks.cover(collection, ids)
    dense = {cid: 1.0 - float(dist) for cid, dist in zip(ids, distances, strict=True)}
    dense_pool = list(dense.values())
    best = np.argsort(-bm25)[:CANDIDATES]
    extra = [lexical.ids[i] for i in best[bm25[best] > 0].tolist()]
    if second is not None:
        # A stable sort best first keeps equal scores in chunk order, as the sort by score it replaced did.
        extra += [
            second.ids[i] for i in np.argsort(-second.with_questions, kind="stable")[:CANDIDATES].tolist()
        ]
    for cid in extra:
        if cid not in dense:
            dense[cid] = chunks.similarity(cid, vector)
    bm25_values = bm25.tolist()  # Python floats, as `float()` of each made them
    candidates = []
    plain: list[float] = []
    with_questions = second.with_questions.tolist() if second is not None else []
    plain_values = second.plain.tolist() if second is not None else []
    for cid, similarity in dense.items():
        position = lexical.position(cid)
        score = bm25_values[position] if position is not None else 0.0
        at = second.position.get(cid) if second is not None else None
        candidates.append(
            Candidate(cid, *chunks.row(cid), similarity, score, with_questions[at] if at is not None else 0.0)
        )
        if second is not None:
            plain.append(plain_values[at] if at is not None else candidates[-1].second)
    if second is None:
        return CandidateSet(candidates, dense_pool, bm25)
    return CandidateSet(candidates, dense_pool, bm25, second.with_questions, second.plain, plain)


def steered_alone(nearest: Candidate | None, languages: frozenset[str]) -> frozenset[str]:
    """The query languages the dense and lexical scores rank alone, without the second model, given the
    nearest passage and the languages its text is written in.

    Those languages themselves for a section without questions: the second model (USE) helps across
    languages and costs same-language ranking. A section with questions (`bot.knowledge.questions`) is
    matched by the second model together with them, so there it also steers a query in any language
    but the document's own (`lang`), such as an English question on a Korean section with an English
    summary line (tuning sets: English answer-bearing R@3 0.919 → 0.973 on the shipped corpus; without
    questions the same rule cost English R@1 0.703 → 0.649, hence the condition)."""
    if nearest is None or not nearest.metadata.get(QUESTIONS_KEY):
        return languages
    return frozenset({str(nearest.metadata.get("lang") or "")}) & languages or languages
