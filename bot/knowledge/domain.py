"""Is a question about game support at all? A linear domain classifier on the query vector the index
already computes (issue 24).

Trained in numpy on bot/knowledge/domain_bank.yaml: questions players ask a game's support desk
against everyday, general-knowledge and chit-chat questions (with the everyday sentences of
bot/knowledge/background.py), all embedded as queries by the index's own embedder; once per embedding
model, then stored with the index (bot/knowledge/fitted.py). Its log-odds
joins the abstain evidence (`fusion.Evidence.domain`), whose per-language-pair thresholds are then
calibrated on the tuning sets so that no on-topic tuning question is abstained.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from bot.knowledge.background import BACKGROUND
from bot.knowledge.embedders import Embedder, embed_queries
from bot.knowledge.fitted import FittedParts, fingerprint
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


FIT_SETTINGS = "logistic l2=1e-3 steps=400 rate=4.0 balanced; float64"
"""Part of the stored fit's fingerprint: change it with `fit_logistic`'s defaults."""


def bank_fingerprint(embedder_name: str) -> str:
    """What a fit is made from: the model, domain_bank.yaml, the background sentences, the fit."""
    bank = resources.files("bot.knowledge").joinpath("domain_bank.yaml").read_text(encoding="utf-8")
    return fingerprint("domain", embedder_name, bank, "\n".join(BACKGROUND), FIT_SETTINGS)


class DomainClassifier:
    """Log-odds that a query vector (of `embedder`) is a game-support question; fitted once per
    embedding model and stored with the index (`parts`), so a later process reads it instead."""

    def __init__(self, embedder: Embedder, parts: FittedParts | None = None) -> None:
        self._embedder = embedder
        self._parts = parts if parts is not None else FittedParts(None)
        self._model: tuple[np.ndarray, float] | None = None

    def fit(self) -> tuple[np.ndarray, float]:
        if self._model is not None:
            return self._model
        name = self._embedder.name

        def make() -> dict[str, np.ndarray]:
            support, everyday = domain_bank()
            texts = support + everyday + list(BACKGROUND)
            x = np.asarray(embed_queries(self._embedder, texts), dtype=np.float64)
            y = np.asarray([1.0] * len(support) + [0.0] * (len(texts) - len(support)))
            w, b = fit_logistic(x, y)
            return {"w": w, "b": np.asarray(b)}

        part = self._parts.get(f"domain:{name}", bank_fingerprint(name), make)
        self._model = (np.asarray(part["w"], dtype=np.float64), float(part["b"]))
        return self._model

    def logit(self, vector: np.ndarray) -> float:
        """The query's log-odds of being a support question, clipped to ±`LOGIT_CLIP`."""
        w, b = self.fit()
        return float(np.clip(np.asarray(vector, dtype=np.float64) @ w + b, -LOGIT_CLIP, LOGIT_CLIP))
