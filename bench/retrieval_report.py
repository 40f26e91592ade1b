"""How bench/retrieval.py prints what it measured: a row per configuration, the held-out figures per query
language → document language pair, the `name=value` figures, and each miss."""

from __future__ import annotations

from collections.abc import Sequence

from bot.knowledge.evaluation import EvalReport

HEADER = f"{'configuration':<44} {'R@1ko':>6} {'R@1en':>6} {'R@1':>6} {'R@3ko':>6} {'R@3en':>6} {'R@3':>6} {'AB@3':>6} {'off-ab':>6} {'wrong':>6}"


def row(label: str, report: EvalReport) -> str:
    return (
        f"{label:<44} {report.recall_at_1('ko'):>6.2f} {report.recall_at_1('en'):>6.2f} {report.recall_at_1():>6.2f}"
        f" {report.recall_at_k('ko'):>6.2f} {report.recall_at_k('en'):>6.2f} {report.recall_at_k():>6.2f}"
        f" {report.answer_bearing_recall():>6.2f} {report.off_topic_abstain_rate:>6.2f} {report.wrong_abstain_rate:>6.2f}"
    )


def pair_header(title: str) -> str:
    return f"{title + ', query → documents':<44} {'cases':>6} {'R@1':>6} {'R@3':>6} {'AB@3':>6} {'wrong':>6} {'off':>6} {'off-ab':>6}"


def pairs(runs: Sequence[tuple[str, EvalReport]]) -> dict[str, dict[str, float]]:
    """Figures per (query language, document language) pair, summed over the reports of `runs`
    (each a document language — `ko+en` for documents with an English line, `ko` for Korean-only —
    and its report)."""
    pairs: dict[str, dict[str, float]] = {}
    for doc_lang, report in runs:
        for lang in ("ko", "en"):
            p = pairs.setdefault(
                f"{lang}→{doc_lang}", dict.fromkeys(("n", "r1", "r3", "ab", "wrong", "off", "off_ab"), 0)
            )
            p["n"] += report.totals.get(lang, 0)
            p["r1"] += report.hits_at_1.get(lang, 0)
            p["r3"] += report.hits_at_k.get(lang, 0)
            p["ab"] += report.answer_bearing_at_k.get(lang, 0)
            p["wrong"] += report.wrongly_abstained_by_lang.get(lang, 0)
            abstained, total = report.off_topic_by_lang.get(lang, (0, 0))
            p["off"] += total
            p["off_ab"] += abstained
    return pairs


def pair_row(name: str, p: dict[str, float]) -> str:
    n, off = p["n"] or 1, p["off"] or 1
    return (
        f"{name:<44} {int(p['n']):>6} {p['r1'] / n:>6.2f} {p['r3'] / n:>6.2f} {p['ab'] / n:>6.2f}"
        f" {p['wrong'] / n:>6.2f} {int(p['off']):>6} {p['off_ab'] / off:>6.2f}"
    )


def figures_of(prefix: str, report: EvalReport) -> dict[str, float]:
    out = {
        f"{prefix}_recall_at1": round(report.recall_at_1(), 3),
        f"{prefix}_recall_at3": round(report.recall_at_k(), 3),
        f"{prefix}_off_topic_abstain_rate": round(report.off_topic_abstain_rate, 3),
        f"{prefix}_wrong_abstain_rate": round(report.wrong_abstain_rate, 3),
        f"{prefix}_answer_bearing_at3": round(report.answer_bearing_recall(), 3),
    }
    for lang in ("ko", "en"):
        out[f"{prefix}_recall_at1_{lang}"] = round(report.recall_at_1(lang), 3)
        out[f"{prefix}_recall_at3_{lang}"] = round(report.recall_at_k(lang), 3)
    return out


def print_misses(label: str, report: EvalReport) -> None:
    """Each miss; `not given` marks an on-topic one whose section the model was not given even as a hit's
    neighbour (an answer-bearing miss), `in a neighbour` one it was given that way."""
    not_given = {id(case) for case in report.not_given}
    for case, got in report.misses:
        want = "nothing" if case.off_topic else f"{case.source} §{case.section}"
        how = "" if case.off_topic else (" not given" if id(case) in not_given else " in a neighbour")
        print(f"  {label} miss{how} [{case.lang}/{case.kind}] {case.query!r}: want {want}; got {got}")


def pair_tables(tables: Sequence[tuple[str, str, Sequence[tuple[str, EvalReport]]]]) -> dict[str, float]:
    """Print a pair table for each (figure prefix, title, reports) and return its figures
    (`<prefix>_<query>_to_<documents>_recall_at1`, ...)."""
    figures: dict[str, float] = {}
    for prefix, title, reports in tables:
        print()
        print(pair_header(title))
        for name, pair in pairs(reports).items():
            print(pair_row(name, pair))
            key = name.replace("→", "_to_").replace("+", "")
            n, off = pair["n"] or 1, pair["off"] or 1
            figures[f"{prefix}_{key}_recall_at1"] = round(pair["r1"] / n, 3)
            figures[f"{prefix}_{key}_answer_bearing_at3"] = round(pair["ab"] / n, 3)
            figures[f"{prefix}_{key}_wrong_abstain_rate"] = round(pair["wrong"] / n, 3)
            figures[f"{prefix}_{key}_off_topic_abstain_rate"] = round(pair["off_ab"] / off, 3)
    return figures
