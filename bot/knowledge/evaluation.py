"""Retrieval evaluation: the labelled query set (tests/retrieval_eval.yaml), recall@k and weight tuning.

Shared by bench/retrieval.py and tests/knowledge so the figure the bench prints is the one the tests hold.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from bot.knowledge.documents import policy_files, strip_english_summaries
from bot.knowledge.index import PolicyIndex

LEXICAL_WEIGHT_GRID = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3)


@dataclass(frozen=True)
class EvalCase:
    """One labelled query: the document file and `##` section that answer it."""

    query: str
    lang: str
    source: str
    section: str


@dataclass
class EvalReport:
    """Recall of one index configuration over an eval set."""

    k: int
    hits_at_1: dict[str, int] = field(default_factory=dict)
    hits_at_k: dict[str, int] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    misses: list[tuple[EvalCase, list[str]]] = field(default_factory=list)
    """Cases whose answer was not in the top k, with what came back instead (`source §section`)."""

    def recall_at_1(self, lang: str | None = None) -> float:
        return self._ratio(self.hits_at_1, lang)

    def recall_at_k(self, lang: str | None = None) -> float:
        return self._ratio(self.hits_at_k, lang)

    def _ratio(self, hits: dict[str, int], lang: str | None) -> float:
        langs = [lang] if lang else list(self.totals)
        total = sum(self.totals.get(x, 0) for x in langs)
        return sum(hits.get(x, 0) for x in langs) / total if total else 0.0


def load_eval_cases(path: Path) -> list[EvalCase]:
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    return [
        EvalCase(
            query=str(c["query"]), lang=str(c["lang"]), source=str(c["source"]), section=str(c["section"])
        )
        for c in raw["cases"]
    ]


def evaluate(
    index: PolicyIndex,
    cases: Iterable[EvalCase],
    *,
    k: int = 3,
    lexical_weight: float | None = None,
) -> EvalReport:
    """Run every case through `index.search_sync` and count where the labelled section ranked."""
    report = EvalReport(k=k)
    for case in cases:
        hits = index.search_sync(case.query, top_k=k, lexical_weight=lexical_weight)
        keys = [(h.source, h.section) for h in hits]
        target = (case.source, case.section)
        report.totals[case.lang] = report.totals.get(case.lang, 0) + 1
        if keys[:1] == [target]:
            report.hits_at_1[case.lang] = report.hits_at_1.get(case.lang, 0) + 1
        if target in keys:
            report.hits_at_k[case.lang] = report.hits_at_k.get(case.lang, 0) + 1
        else:
            report.misses.append((case, [f"{s} §{sec}" for s, sec in keys]))
    return report


def tune_lexical_weight(
    indexes: Sequence[PolicyIndex],
    cases: Sequence[EvalCase],
    grid: Sequence[float] = LEXICAL_WEIGHT_GRID,
    *,
    k: int = 3,
) -> tuple[float, dict[float, list[EvalReport]]]:
    """The grid weight with the best summed recall@1 + recall@k over all `indexes` (ties → smaller).

    Pass the shipped corpus and its Korean-only variant so the weight does not overfit the English
    summary lines. Query vectors are cached by the index, so each weight costs no extra embedding.
    """
    reports: dict[float, list[EvalReport]] = {}
    best_weight, best_score = 0.0, -1.0
    for weight in grid:
        reports[weight] = [evaluate(ix, cases, k=k, lexical_weight=weight) for ix in indexes]
        score = sum(r.recall_at_1() + r.recall_at_k() for r in reports[weight])
        if score > best_score + 1e-9:
            best_weight, best_score = weight, score
    return best_weight, reports


def write_korean_only_copy(src: Path, dst: Path) -> Path:
    """Copy a policy directory with every `> EN:` summary line removed (an operator's Korean-only set)."""
    dst = Path(dst)
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    for path in policy_files(Path(src)):
        (dst / path.name).write_text(
            strip_english_summaries(path.read_text(encoding="utf-8")), encoding="utf-8"
        )
    return dst
