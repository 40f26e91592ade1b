"""The lexical signal of hybrid retrieval: BM25 over Hangul character bigrams and Latin/number words,
plus the alias table that widens a query with synonyms (이용 제한/정지, 법정대리인/부모, refund/환불…).

Written by hand (numpy only) because the corpus is small, Korean needs character n-grams rather than
whitespace words, and no BM25 package in reach tokenises Hangul this way.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from bot.vocabulary.language import HANGUL, HANGUL_RANGE

DEFAULT_ALIASES = Path(__file__).with_name("aliases.yaml")

STEM_CHARS = 6
_NUMBER_SEPARATOR = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_TOKEN = re.compile(f"[{HANGUL_RANGE}]+|[a-z0-9]+")
_STOPWORDS = frozenset(
    "a an the is are was were be been am do does did i me my you your we our it its of to in on at for "
    "with and or if can could would should will what how when which who why there this that these those "
    "from by as any get got have has had not no so about".split()
)


def normalise(text: str) -> str:
    """NFKC, lower case, and `20,000` → `20000` so amounts match however they are written."""
    return _NUMBER_SEPARATOR.sub("", unicodedata.normalize("NFKC", text).lower())


def tokenize(text: str) -> list[str]:
    """Hangul runs → character bigrams (a single syllable stays whole); other runs → words."""
    tokens: list[str] = []
    for run in _TOKEN.findall(normalise(text)):
        if HANGUL.match(run):
            if len(run) == 1:
                tokens.append(run)
            else:
                tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
        elif run not in _STOPWORDS:
            # truncation stemming: "suspended"/"suspension", "refunds"/"refunded" meet at 6 letters
            tokens.append(run[:STEM_CHARS])
    return tokens


@dataclass(frozen=True)
class AliasTable:
    """Groups of interchangeable terms; a query mentioning one term also searches for the others."""

    groups: tuple[tuple[str, ...], ...]

    @classmethod
    def load(cls, path: Path = DEFAULT_ALIASES) -> AliasTable:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        groups = raw.get("groups", []) if isinstance(raw, dict) else raw
        return cls(tuple(tuple(str(t) for t in g) for g in groups if isinstance(g, list) and len(g) > 1))

    @classmethod
    def empty(cls) -> AliasTable:
        return cls(())

    def expansions(self, query: str) -> list[str]:
        """The alias terms a query does not already contain, for every group it touches."""
        text = normalise(query)
        words = set(re.findall(r"[a-z0-9]+", text))
        extra: list[str] = []
        for group in self.groups:
            if any(_mentions(text, words, normalise(term)) for term in group):
                extra.extend(t for t in group if not _mentions(text, words, normalise(t)))
        return extra

    def expand(self, query: str) -> str:
        extra = self.expansions(query)
        return f"{query} {' '.join(extra)}" if extra else query


def _mentions(text: str, words: set[str], term: str) -> bool:
    if HANGUL.search(term):
        return term in text
    parts = term.split()
    if len(parts) == 1:
        return term in words
    return re.search(r"\b" + r"\s+".join(map(re.escape, parts)) + r"\b", text) is not None


class LexicalIndex:
    """Okapi BM25 over `tokenize` tokens, with postings held as numpy arrays for fast scoring."""

    def __init__(self, ids: Sequence[str], texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.ids = list(ids)
        self._position = {doc_id: i for i, doc_id in enumerate(self.ids)}
        self._k1, self._b = k1, b
        n = len(self.ids)
        doc_tokens = [Counter(tokenize(t)) for t in texts]
        lengths = np.array([sum(c.values()) for c in doc_tokens], dtype=np.float32)
        avg = float(lengths.mean()) if n else 1.0
        self._norm = k1 * (1 - b + b * lengths / max(avg, 1e-6))
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for d, counts in enumerate(doc_tokens):
            for tok, tf in counts.items():
                docs, tfs = postings.setdefault(tok, ([], []))
                docs.append(d)
                tfs.append(tf)
        self._postings = {
            tok: (np.array(docs, dtype=np.int32), np.array(tfs, dtype=np.float32))
            for tok, (docs, tfs) in postings.items()
        }
        self._idf = {
            tok: math.log(1 + (n - len(d) + 0.5) / (len(d) + 0.5)) for tok, (d, _) in self._postings.items()
        }

    def __len__(self) -> int:
        return len(self.ids)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for the query (zeros when nothing matches)."""
        out = np.zeros(len(self.ids), dtype=np.float32)
        for tok, qtf in Counter(tokenize(query)).items():
            posting = self._postings.get(tok)
            if posting is None:
                continue
            docs, tfs = posting
            # a repeated query token counts once more per repeat, damped like BM25's tf
            weight = self._idf[tok] * (1 + math.log(qtf))
            out[docs] += weight * tfs * (self._k1 + 1) / (tfs + self._norm[docs])
        return out

    def top(self, query: str, n: int) -> list[tuple[str, float]]:
        """The `n` best documents with a positive score, best first."""
        scores = self.scores(query)
        if not len(scores):
            return []
        n = min(n, len(scores))
        best = np.argpartition(-scores, n - 1)[:n]
        best = best[np.argsort(-scores[best])]
        return [(self.ids[i], float(scores[i])) for i in best if scores[i] > 0]

    def score_ids(self, query: str, ids: Iterable[str]) -> dict[str, float]:
        scores = self.scores(query)
        return {doc_id: float(scores[self._position[doc_id]]) for doc_id in ids if doc_id in self._position}
