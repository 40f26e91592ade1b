"""The "no policy covers this" evidence of a query (`fusion.Evidence`), measured against everyday
sentences (bot/knowledge/background.py) in the languages of the nearest passage, so a cross-lingual
question is compared with small talk across the same language gap and is never abstained only because
cross-lingual similarities are lower by nature (issue 24). The threshold is then the language pair's
(`FusionParams.threshold`)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from bot.knowledge.background import LANGUAGES, background_rows, background_vectors, text_languages
from bot.knowledge.candidates import CANDIDATES, CandidateSet
from bot.knowledge.domain import DomainClassifier
from bot.knowledge.embedders import Embedder
from bot.knowledge.fitted import FittedParts
from bot.knowledge.fusion import Evidence, FusionParams, Ranked, dense_evidence
from bot.knowledge.lexical import LexicalIndex
from bot.knowledge.second_dense import SecondDense
from bot.vocabulary.language import detect_language


def language_pair(query: str, languages: frozenset[str]) -> str:
    """`en→ko`: the query's language and the languages of the passage it is compared with."""
    return f"{detect_language(query)}→{'+'.join(sorted(languages, key=LANGUAGES.index))}"


class Yardstick:
    """The background sentences' vectors under each model and a query's evidence; what is made by
    embedding fixed sentences (the vectors, the domain classifiers) is stored with the index (`parts`)."""

    def __init__(
        self, embedder: Embedder, second: SecondDense | None, parts: FittedParts | None = None
    ) -> None:
        self._embedder = embedder
        self._second = second
        self._parts = parts if parts is not None else FittedParts(None)
        self._domain = DomainClassifier(embedder, self._parts)
        self._second_domain = DomainClassifier(second.embedder, self._parts) if second is not None else None
        self._vectors: np.ndarray | None = None
        self._in: dict[frozenset[str], np.ndarray] = {}
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Read (or fit and store) the domain classifiers and the background vectors of both models
        now, not on a player's first question."""
        self.background(frozenset(LANGUAGES))
        for classifier in (self._domain, self._second_domain):
            if classifier is not None:
                classifier.fit()
        if self._second is not None:
            self._second.background_vectors()

    def background(self, languages: frozenset[str]) -> np.ndarray:
        """The main model's vectors of the background sentences in `languages` (taken from all of them
        once per set of languages, not copied per query; read-only)."""
        rows = self._in.get(languages)
        if rows is not None:
            return rows
        with self._lock:
            if self._vectors is None:
                self._vectors = background_vectors(self._embedder, self._parts)
            rows = self._in[languages] = self._vectors[background_rows(languages)]
            return rows

    def evidence(
        self,
        query: str,
        vector: np.ndarray,
        terms: tuple[str, ...],
        found: CandidateSet,
        lexical: LexicalIndex | None,
        ranked: Sequence[Ranked],
        languages: frozenset[str],
        params: FusionParams,
    ) -> Evidence:
        top, margin = dense_evidence(found.dense_pool)
        coverage = lexical.coverage(terms, ranked[0].candidate.chunk_id) if ranked and lexical else 0.0
        background = Evidence.background_of(self.background(languages) @ vector, params.background_k)
        second_margin = second_standout = 0.0
        if self._second is not None and len(found.second_pool):
            # The sections' text alone: their questions lift small talk that shares a word with them.
            at = max(range(len(found.candidates)), key=found.plain.__getitem__)  # the first best
            best, best_second = found.candidates[at], found.plain[at]
            second_background = self._second.background(query, text_languages(best.text), params.background_k)
            second_margin = best_second - second_background
            nearest = np.sort(found.plain_pool)[-CANDIDATES:]
            second_standout = best_second - float(nearest.mean())
        domain = self._domain.logit(vector) if params.domain_weight else 0.0
        second_domain = 0.0
        if self._second_domain is not None and params.second_domain_weight(detect_language(query)):
            second_domain = self._second_domain.logit(self._second.query_vector(query))
        return Evidence(
            top,
            margin,
            coverage,
            background,
            second_margin=second_margin,
            second_standout=second_standout,
            domain=domain,
            second_domain=second_domain,
            pair=language_pair(query, languages),
        )
