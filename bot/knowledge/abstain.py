"""The "no policy covers this" evidence of a query (`fusion.Evidence`), measured against everyday
sentences (bot/knowledge/background.py) in the languages of the nearest passage, so a cross-lingual
question is compared with small talk across the same language gap and is never abstained only because
cross-lingual similarities are lower by nature (issue 24). The threshold is then the language pair's
(`FusionParams.threshold`)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from bot.knowledge.background import BACKGROUND, LANGUAGES, background_rows, text_languages
from bot.knowledge.candidates import CANDIDATES, CandidateSet
from bot.knowledge.domain import DomainClassifier
from bot.knowledge.embedders import Embedder
from bot.knowledge.fusion import Evidence, FusionParams, Ranked, dense_evidence
from bot.knowledge.lexical import LexicalIndex
from bot.knowledge.second_dense import SecondDense
from bot.vocabulary.language import detect_language


def language_pair(query: str, languages: frozenset[str]) -> str:
    """`en→ko`: the query's language and the languages of the passage it is compared with."""
    return f"{detect_language(query)}→{'+'.join(sorted(languages, key=LANGUAGES.index))}"


class Yardstick:
    """The background sentences' vectors under each model (embedded once) and a query's evidence."""

    def __init__(self, embedder: Embedder, second: SecondDense | None) -> None:
        self._embedder = embedder
        self._second = second
        self._domain = DomainClassifier(embedder)
        self._second_domain = DomainClassifier(second.embedder) if second is not None else None
        self._vectors: np.ndarray | None = None
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Fit the domain classifiers now (an embedding batch of the bank each), not on a player's first
        question."""
        for classifier in (self._domain, self._second_domain):
            if classifier is not None:
                classifier.fit()

    def background(self, languages: frozenset[str]) -> np.ndarray:
        """The main model's vectors of the background sentences in `languages`."""
        with self._lock:
            if self._vectors is None:
                self._vectors = np.asarray(self._embedder.embed_passages(list(BACKGROUND)), dtype=np.float32)
            return self._vectors[background_rows(languages)]

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
        if self._second is not None and found.second_pool:
            # The sections' text alone: their questions lift small talk that shares a word with them.
            plain = found.plain_second or {c.chunk_id: c.second for c in found.candidates}
            pool = list(found.plain_second.values()) if found.plain_second else found.second_pool
            best = max(found.candidates, key=lambda c: plain.get(c.chunk_id, c.second))
            best_second = plain.get(best.chunk_id, best.second)
            second_background = self._second.background(query, text_languages(best.text), params.background_k)
            second_margin = best_second - second_background
            nearest = np.sort(np.asarray(pool))[-CANDIDATES:]
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
