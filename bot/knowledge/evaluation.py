"""Retrieval evaluation: labelled query sets (tests/retrieval_*.yaml), recall@k, abstain rates, tuning.

Shared by bench/retrieval.py and tests/knowledge so the figure the bench prints is the one the tests hold.
A case with no `source` is off-topic: the search must return nothing for it.
"""

from __future__ import annotations

import itertools
import math
import random
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.knowledge.documents import policy_files, strip_english_summaries
from bot.knowledge.fusion import Evidence, FusionParams
from bot.knowledge.hits import PolicyHit
from bot.knowledge.index import PolicyIndex
from bot.knowledge.questions import questions_path
from bot.yaml_files import load_yaml

OFF_TOPIC = "off_topic"


@dataclass(frozen=True)
class EvalCase:
    """One labelled query: the document file and `##` section that answer it (none when off-topic)."""

    query: str
    lang: str
    source: str | None
    section: str | None
    kind: str = "paraphrase"

    @property
    def off_topic(self) -> bool:
        return self.source is None


@dataclass
class EvalReport:
    """Recall and abstain figures of one index configuration over an eval set."""

    k: int
    hits_at_1: dict[str, int] = field(default_factory=dict)
    hits_at_k: dict[str, int] = field(default_factory=dict)
    answer_bearing_at_k: dict[str, int] = field(default_factory=dict)
    """Cases whose labelled section is in the text the top k hits give the model: a hit's own section
    or the neighbouring section it carries (bot/knowledge/context.py)."""
    wrongly_abstained_by_lang: dict[str, int] = field(default_factory=dict)
    off_topic_by_lang: dict[str, tuple[int, int]] = field(default_factory=dict)
    """(abstained, total) off-topic cases by query language."""
    totals: dict[str, int] = field(default_factory=dict)
    wrongly_abstained: int = 0
    off_topic_total: int = 0
    off_topic_abstained: int = 0
    misses: list[tuple[EvalCase, list[str]]] = field(default_factory=list)
    """On-topic cases whose answer was not in the top k (with what came back, `source §section`), and
    off-topic cases that got an answer."""
    not_given: list[EvalCase] = field(default_factory=list)
    """On-topic cases whose labelled section was not in the text given to the model at all (not even as a
    hit's neighbour): the answer-bearing misses."""

    def recall_at_1(self, lang: str | None = None) -> float:
        return self._ratio(self.hits_at_1, lang)

    def recall_at_k(self, lang: str | None = None) -> float:
        return self._ratio(self.hits_at_k, lang)

    def answer_bearing_recall(self, lang: str | None = None) -> float:
        """Answer-bearing recall@k: the labelled section's text is inside what the top k hits give."""
        return self._ratio(self.answer_bearing_at_k, lang)

    def wrong_abstain_rate_of(self, lang: str) -> float:
        total = self.totals.get(lang, 0)
        return self.wrongly_abstained_by_lang.get(lang, 0) / total if total else 0.0

    def off_topic_abstain_rate_of(self, lang: str) -> float:
        abstained, total = self.off_topic_by_lang.get(lang, (0, 0))
        return abstained / total if total else 1.0

    def _ratio(self, hits: dict[str, int], lang: str | None) -> float:
        langs = [lang] if lang else list(self.totals)
        total = sum(self.totals.get(x, 0) for x in langs)
        return sum(hits.get(x, 0) for x in langs) / total if total else 0.0

    @property
    def on_topic_total(self) -> int:
        return sum(self.totals.values())

    @property
    def wrong_abstain_rate(self) -> float:
        return self.wrongly_abstained / self.on_topic_total if self.on_topic_total else 0.0

    @property
    def off_topic_abstain_rate(self) -> float:
        return self.off_topic_abstained / self.off_topic_total if self.off_topic_total else 1.0


def load_eval_cases(path: Path) -> list[EvalCase]:
    raw = load_yaml(Path(path).read_text(encoding="utf-8"))
    cases = []
    for c in raw["cases"]:
        source = c.get("source")
        cases.append(
            EvalCase(
                query=str(c["query"]),
                lang=str(c["lang"]),
                source=str(source) if source is not None else None,
                section=str(c["section"]) if source is not None else None,
                kind=str(c.get("kind", OFF_TOPIC if source is None else "paraphrase")),
            )
        )
    return cases


def _record(report: EvalReport, case: EvalCase, hits: Sequence[PolicyHit]) -> None:
    keys = [(h.source, h.section) for h in hits[: report.k]]
    given = keys + [
        (h.neighbour_source or h.source, h.neighbour_section) for h in hits[: report.k] if h.neighbour_section
    ]
    if case.off_topic:
        report.off_topic_total += 1
        abstained, total = report.off_topic_by_lang.get(case.lang, (0, 0))
        report.off_topic_by_lang[case.lang] = (abstained + (not keys), total + 1)
        if not keys:
            report.off_topic_abstained += 1
        else:
            report.misses.append((case, [f"{s} §{sec}" for s, sec in keys]))
        return
    target = (case.source, case.section)
    report.totals[case.lang] = report.totals.get(case.lang, 0) + 1
    if not keys:
        report.wrongly_abstained += 1
        report.wrongly_abstained_by_lang[case.lang] = report.wrongly_abstained_by_lang.get(case.lang, 0) + 1
    if target in given:
        report.answer_bearing_at_k[case.lang] = report.answer_bearing_at_k.get(case.lang, 0) + 1
    else:
        report.not_given.append(case)
    if keys[:1] == [target]:
        report.hits_at_1[case.lang] = report.hits_at_1.get(case.lang, 0) + 1
    if target in keys:
        report.hits_at_k[case.lang] = report.hits_at_k.get(case.lang, 0) + 1
    else:
        report.misses.append((case, [f"{s} §{sec}" for s, sec in keys]))


def evaluate(
    index: PolicyIndex, cases: Iterable[EvalCase], *, k: int = 3, fusion: FusionParams | None = None
) -> EvalReport:
    """Run every case through `index.search_sync` and count where the labelled section ranked."""
    report = EvalReport(k=k)
    for case in cases:
        _record(report, case, index.search_sync(case.query, top_k=k, fusion=fusion))
    return report


def _abstains(evidence: Evidence, params: FusionParams) -> bool:
    return evidence.abstains(params)


def evaluate_explained(
    explained: Sequence[tuple[EvalCase, list[PolicyHit], Evidence]], params: FusionParams, *, k: int = 3
) -> EvalReport:
    """`evaluate` from precomputed `PolicyIndex.explain` results (no search): for threshold tuning."""
    report = EvalReport(k=k)
    for case, hits, evidence in explained:
        _record(report, case, [] if _abstains(evidence, params) else hits)
    return report


def tune_fusion(
    runs: Sequence[tuple[PolicyIndex, Sequence[EvalCase]]],
    base: FusionParams,
    grid: dict[str, Sequence[float]],
    *,
    k: int = 3,
    max_wrong_abstain: float = 0.0,
) -> tuple[FusionParams, list[tuple[FusionParams, float]]]:
    """The grid point with the best summed recall@1 + answer-bearing recall@k + off-topic abstain rate
    over `runs` (an index and its cases each), each with the highest abstain threshold that wrongly
    abstains on at most `max_wrong_abstain` of the on-topic cases.

    Query vectors are cached by the index, so each grid point costs no extra embedding.
    """
    names = list(grid)
    results: list[tuple[FusionParams, float]] = []
    best, best_score = base, -1.0
    for values in itertools.product(*(grid[n] for n in names)):
        params = base.with_(
            **dict(zip(names, values, strict=True)), abstain_below=float("-inf"), abstain_by_pair=()
        )
        explained = [[(c, *ix.explain(c.query, fusion=params, top_k=k)) for c in cases] for ix, cases in runs]
        by_pair = calibrate_abstain_by_pair(explained, params, max_wrong_abstain)
        params = params.with_(
            abstain_by_pair=by_pair, abstain_below=min((t for _, t in by_pair), default=0.0)
        )
        reports = [evaluate_explained(e, params, k=k) for e in explained]
        score = sum(r.recall_at_1() + r.answer_bearing_recall() + r.off_topic_abstain_rate for r in reports)
        results.append((params, score))
        if score > best_score + 1e-9:
            best, best_score = params, score
    return best, results


def calibrate_abstain(
    explained: Sequence[Sequence[tuple[EvalCase, list[PolicyHit], Evidence]]],
    params: FusionParams,
    max_wrong_abstain: float,
) -> float:
    """The highest evidence threshold under which at most `max_wrong_abstain` of on-topic cases fall."""
    on_topic = sorted(ev.score(params) for part in explained for c, _, ev in part if not c.off_topic)
    if not on_topic:
        return float("-inf")
    allowed = int(max_wrong_abstain * len(on_topic))
    return on_topic[allowed] - 1e-6


def calibrate_abstain_by_pair(
    explained: Sequence[Sequence[tuple[EvalCase, list[PolicyHit], Evidence]]],
    params: FusionParams,
    max_wrong_abstain: float,
) -> tuple[tuple[str, float], ...]:
    """`calibrate_abstain` for each language pair (`Evidence.pair`) of the on-topic cases apart, less
    the query language's `FusionParams.abstain_margin_by_language`."""
    pairs = sorted({ev.pair for part in explained for c, _, ev in part if not c.off_topic})
    thresholds = []
    margins = dict(params.abstain_margin_by_language)
    for pair in pairs:
        rows = [[row for row in part if row[2].pair == pair] for part in explained]
        margin = margins.get(pair.partition("→")[0], 0.0)
        # rounded down to 4 places, so the rounding never lifts it above a case it must keep
        lowest = calibrate_abstain(rows, params, max_wrong_abstain) - margin
        thresholds.append((pair, math.floor(lowest * 1e4) / 1e4))
    return tuple(thresholds)


@dataclass(frozen=True)
class MarginOutcome:
    """What a threshold margin does to new questions of one language, by cross-validation."""

    language: str
    margin: float
    wrongly_abstained: float
    """Share of held-out-fold on-topic questions under their pair's threshold."""
    off_topic_abstained: dict[str, float]
    """Share of held-out-fold off-topic questions under it, by the set they come from."""


def cross_validate_margins(
    rows: Sequence[tuple[str, EvalCase, Evidence]],
    params: FusionParams,
    margins: Sequence[float],
    *,
    folds: int = 5,
    shuffles: int = 20,
) -> list[MarginOutcome]:
    """How a pair's threshold set `margin` below its lowest on-topic question does on questions it was
    not calibrated on: for each query language, `shuffles` times, the questions are split into `folds`;
    each fold is judged by thresholds calibrated on the others (`calibrate_abstain_by_pair`'s rule, a
    pair without on-topic questions there taking the lowest threshold). `rows` are (set name, case,
    evidence) of the tuning sets; the off-topic share is reported per set, so small talk and hard
    off-topic questions are told apart. This is how `FusionParams.abstain_margin_by_language` is chosen
    (bench/retrieval.py --cross-validate)."""
    out = []
    for language in sorted({case.lang for _, case, _ in rows}):
        mine = [(name, case, ev.pair, ev.score(params)) for name, case, ev in rows if case.lang == language]
        for margin in margins:
            wrong = on_topic = 0
            off: dict[str, list[int]] = {}
            for shuffle in range(shuffles):
                order = list(range(len(mine)))
                random.Random(shuffle).shuffle(order)
                for fold in range(folds):
                    judged = set(order[fold::folds])
                    lowest: dict[str, float] = {}
                    for i in order:
                        _, case, pair, score = mine[i]
                        if i not in judged and not case.off_topic:
                            lowest[pair] = min(lowest.get(pair, math.inf), score)
                    if not lowest:
                        continue
                    floor = min(lowest.values())
                    for i in judged:
                        name, case, pair, score = mine[i]
                        below = score < lowest.get(pair, floor) - margin
                        if case.off_topic:
                            counts = off.setdefault(name, [0, 0])
                            counts[0] += below
                            counts[1] += 1
                        else:
                            wrong += below
                            on_topic += 1
            out.append(
                MarginOutcome(
                    language,
                    margin,
                    wrong / on_topic if on_topic else 0.0,
                    {name: a / n for name, (a, n) in sorted(off.items())},
                )
            )
    return out


def write_korean_only_copy(src: Path, dst: Path, *, questions_from: Path | None = None) -> Path:
    """Copy a policy directory with every `> EN:` summary line removed (an operator's Korean-only set),
    with the questions files of `questions_from` (written from the Korean-only text: questions written
    from the text with its English lines would be stale here, `bot.knowledge.questions`)."""
    dst = Path(dst)
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    for path in policy_files(Path(src)):
        (dst / path.name).write_text(
            strip_english_summaries(path.read_text(encoding="utf-8")), encoding="utf-8"
        )
        if questions_from is not None and questions_path(Path(questions_from) / path.name).is_file():
            shutil.copyfile(questions_path(Path(questions_from) / path.name), questions_path(dst / path.name))
    return dst


def copy_without_questions(src: Path, dst: Path) -> Path:
    """Copy a policy directory without its questions files: what retrieval does without them."""
    dst = Path(dst)
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    for path in policy_files(Path(src)):
        shutil.copyfile(path, dst / path.name)
    return dst
