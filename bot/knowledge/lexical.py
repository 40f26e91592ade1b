"""The lexical side of retrieval: BM25 (bm25s) over analysed terms of each chunk's body and heading.

A chunk's terms are computed once, when it is indexed, and stored with it in Chroma (metadata
`terms` and `heading_terms`), so the BM25 index is rebuilt from the collection itself in any
process, embedded or against a Chroma server, without analysing the text again. The heading
(document title and `##` section title) is its own field with its own weight: a query that names a
section's heading word ("… 쿠폰 한도") should rank that section above ones that only share the body.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import numpy as np

from bot.knowledge.analysis import analyze

TERMS_KEY = "terms"
HEADING_TERMS_KEY = "heading_terms"


def chunk_terms(title: str, section: str, text: str) -> dict[str, str]:
    """What a chunk stores for the lexical index: its body and heading terms, space-separated."""
    return {
        TERMS_KEY: " ".join(analyze(text)),
        HEADING_TERMS_KEY: " ".join(analyze(f"{title} {section}")),
    }


class _Field:
    def __init__(self, docs: Sequence[list[str]], k1: float, b: float) -> None:
        import bm25s

        # bm25s sets its own logger to DEBUG when imported and logs every index build there
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        self.model = bm25s.BM25(k1=k1, b=b)
        # an empty document still needs a row: bm25s indexes a placeholder term for it
        self.model.index([d or [""] for d in docs], show_progress=False)
        self.vocab: dict[str, int] = self.model.vocab_dict
        self._columns = self._exact_columns()

    def _exact_columns(self) -> tuple[np.ndarray, np.ndarray, list[int], int] | None:
        """bm25s's term columns (scores, document rows, where each term's run starts) when a query can
        be scored from them by plain array additions exactly as `get_scores` scores it: float32, no
        score for absent terms, no document twice in a term's column. None: ask bm25s."""
        stored = self.model.scores
        data, indices, indptr = stored["data"], stored["indices"], stored["indptr"]
        if self.model.nonoccurrence_array is not None or data.dtype != np.float32:
            return None
        terms = np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))
        pairs = terms * max(1, int(stored["num_docs"])) + indices.astype(np.int64)
        if len(np.unique(pairs)) != len(pairs):
            return None
        return data, indices, indptr.tolist(), int(stored["num_docs"])

    def scores(self, ids: list[int], n: int) -> np.ndarray:
        if not ids:
            return np.zeros(n, dtype=np.float32)
        if self._columns is None:
            return np.asarray(self.model.get_scores(ids), dtype=np.float32)
        # What `get_scores` computes (each term's column added in query order onto float32 zeros),
        # without its per-call checks and conversions: a quarter of a search's lexical time.
        data, indices, indptr, docs = self._columns
        scores = np.zeros(docs, dtype=np.float32)
        for term in ids:
            start, end = indptr[term], indptr[term + 1]
            scores[indices[start:end]] += data[start:end]
        return scores


class LexicalIndex:
    """BM25 over two fields (body, heading) of the same chunks, in the order of `ids`."""

    def __init__(
        self,
        ids: Sequence[str],
        body_terms: Sequence[list[str]],
        heading_terms: Sequence[list[str]],
        *,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        self.ids = list(ids)
        self._position = {chunk_id: i for i, chunk_id in enumerate(self.ids)}
        self._n = len(self.ids)
        self._body = _Field(body_terms, k1, b) if self._n else None
        self._heading = _Field(heading_terms, k1, b) if self._n else None
        self._doc_terms = [
            set(body) | set(head) for body, head in zip(body_terms, heading_terms, strict=True)
        ]
        df: dict[str, int] = {}
        for terms in self._doc_terms:
            for term in terms:
                df[term] = df.get(term, 0) + 1
        self._idf = {t: math.log(1 + (self._n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        self._unseen_idf = math.log(1 + (self._n + 0.5) / 0.5)

    @classmethod
    def from_stored(cls, ids: Sequence[str], metadatas: Sequence[dict[str, object] | None]) -> LexicalIndex:
        """Rebuild from the `terms` / `heading_terms` stored with each chunk."""
        body = [str((m or {}).get(TERMS_KEY, "")).split() for m in metadatas]
        heading = [str((m or {}).get(HEADING_TERMS_KEY, "")).split() for m in metadatas]
        return cls(ids, body, heading)

    def __len__(self) -> int:
        return self._n

    def position(self, chunk_id: str) -> int | None:
        return self._position.get(chunk_id)

    def scores(
        self,
        query_terms: Sequence[str],
        heading_weight: float,
        *,
        head: str | None = None,
        head_weight: float = 0.0,
    ) -> np.ndarray:
        """Body BM25 + `heading_weight` × heading BM25 for every chunk (zeros when nothing matches).

        `head` (a keyword query's head noun, `analysis.keyword_head`) counts `1 + head_weight` times."""
        if not self._n or not query_terms:
            return np.zeros(self._n, dtype=np.float32)
        total = self._fields(query_terms, heading_weight)
        if head and head_weight:
            total = total + head_weight * self._fields([head], heading_weight)
        return total

    def _fields(self, query_terms: Sequence[str], heading_weight: float) -> np.ndarray:
        assert self._body is not None and self._heading is not None
        body_ids = [self._body.vocab[t] for t in query_terms if t and t in self._body.vocab]
        head_ids = [self._heading.vocab[t] for t in query_terms if t and t in self._heading.vocab]
        return self._body.scores(body_ids, self._n) + heading_weight * self._heading.scores(head_ids, self._n)

    def coverage(self, query_terms: Sequence[str], chunk_id: str) -> float:
        """The idf-weighted share of the query's terms that the chunk contains (0–1); a term the corpus
        never uses counts as rare, so "오늘 점심 뭐 먹을까요" is poorly covered by a section that only
        mentions 점심."""
        position = self._position.get(chunk_id)
        unique = set(query_terms)
        if position is None or not unique:
            return 0.0
        weights = {t: self._idf.get(t, self._unseen_idf) for t in unique}
        found = self._doc_terms[position]
        return sum(w for t, w in weights.items() if t in found) / sum(weights.values())
