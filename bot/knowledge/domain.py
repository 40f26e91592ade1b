"""Is a question about game support at all? A linear domain classifier on the query vector the index
already computes (issue 24).

Trained once per process, in numpy, on bot/knowledge/domain_bank.yaml: questions players ask a game's
support desk against everyday, general-knowledge and chit-chat questions (with the everyday sentences
of bot/knowledge/background.py), all embedded as queries by the index's own embedder. Its log-odds
joins the abstain evidence (`fusion.Evidence.domain`), whose per-language-pair thresholds are then
calibrated on the tuning sets so that no on-topic tuning question is abstained.
"""

from __future__ import annotations

import threading
from importlib import resources

import numpy as np

from bot.knowledge.background import BACKGROUND
from bot.knowledge.embedders import Embedder, embed_queries
from bot.yaml_files import load_yaml

LOGIT_CLIP = 8.0
"""The log-odds are clipped to ±this, so one confident sentence cannot outweigh the passage evidence."""


def domain_bank() -> tuple[list[str], list[str]]:
    """(support questions, everyday questions) of domain_bank.yaml."""
    text = resources.files("bot.knowledge").joinpath("domain_bank.yaml").read_text(encoding="utf-8")
    raw = load_yaml(text)
    return [str(s) for s in raw["support"]], [str(s) for s in raw["everyday"]]


def fit_logistic(
    x: np.ndarray, y: np.ndarray, *, l2: float = 1e-3, steps: int = 400, rate: float = 4.0
) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by full-batch gradient descent, classes weighted to balance."""
    n, dim = x.shape
    positives = max(1.0, float(y.sum()))
    weights = np.where(y > 0, n / (2 * positives), n / (2 * max(1.0, n - positives)))
    w, b = np.zeros(dim), 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
        g = weights * (p - y) / n
        w -= rate * (x.T @ g + l2 * w)
        b -= rate * float(g.sum())
    return w, b


_FITTED: dict[str, tuple[np.ndarray, float]] = {}
"""The fitted model per embedder name: every index of a process (a reindex, a second corpus, a shard)
that embeds with the same model shares one fit, paid once per process."""
_FIT_LOCK = threading.Lock()


class DomainClassifier:
    """Log-odds that a query vector (of `embedder`) is a game-support question; trained on first use,
    once per process and embedding model."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._model: tuple[np.ndarray, float] | None = None

    def fit(self) -> tuple[np.ndarray, float]:
        if self._model is not None:
            return self._model
        key = self._embedder.name
        with _FIT_LOCK:
            if key not in _FITTED:
                support, everyday = domain_bank()
                texts = support + everyday + list(BACKGROUND)
                x = np.asarray(embed_queries(self._embedder, texts), dtype=np.float64)
                y = np.asarray([1.0] * len(support) + [0.0] * (len(texts) - len(support)))
                _FITTED[key] = fit_logistic(x, y)
            self._model = _FITTED[key]
        return self._model

    def logit(self, vector: np.ndarray) -> float:
        """The query's log-odds of being a support question, clipped to ±`LOGIT_CLIP`."""
        w, b = self.fit()
        return float(np.clip(np.asarray(vector, dtype=np.float64) @ w + b, -LOGIT_CLIP, LOGIT_CLIP))
