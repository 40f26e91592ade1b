"""Policy search latency against a raw Chroma vector query on the same index, in one run.

Both sides get the query's vector for free: the policy search takes it from its query-vector cache
(filled by one warm-up pass; a burst of concurrent searches embeds its distinct queries in one batch),
and the raw query is handed the same vector. The raw query is what a plain RAG step would do: the 3
nearest chunks with their texts and metadata. The policy search adds the BM25 scoring, the fusion, the
abstain decision and the citations. The two are interleaved query by query so load affects both alike.
The uncached figures (embedding included) are printed too.

    python -m bench.search_latency [--rounds 20] [--data-dir DIR]

Prints `policy_search_p50_ms=N`, `raw_chroma_p50_ms=N`, `policy_search_vs_raw_chroma_ratio=N`;
`main(argv)` returns the figures as a dict.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.app import make_policy_index
from bot.config import load_settings
from bot.knowledge.index import PolicyIndex

QUERIES = [
    "배송이 늦으면 보상 받을 수 있나요?",
    "환불은 언제까지 되나요?",
    "계정 연동은 어떻게 하나요?",
    "점검 보상은 언제 지급돼요?",
    "중복 결제가 됐어요",
    "선물한 아이템을 돌려받을 수 있나요?",
    "쿠폰 한도",
    "닉네임 변경 제한",
    "How do refunds work?",
    "What happens if my delivery is late?",
    "I was charged twice for one purchase",
    "how do I turn on two-factor authentication?",
]


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _p50(values: list[float]) -> float:
    return round(statistics.median(values), 3) if values else 0.0


def measure(index: PolicyIndex, rounds: int) -> dict[str, Any]:
    uncached: list[float] = []
    index._query_vector.cache_clear()
    index.search_sync("warm-up")  # analyzer, background vectors, lexical index and snapshot load once
    for query in QUERIES:  # the first pass embeds each query: that is the uncached figure
        start = time.perf_counter()
        index.search_sync(query, 3)
        uncached.append(_ms(start))
    collection = index._current()
    if collection is None:
        raise SystemExit("the policy index is empty")
    vectors = {q: index._query_vector(q) for q in QUERIES}
    policy: list[float] = []
    raw: list[float] = []
    for _ in range(rounds):
        for query in QUERIES:
            start = time.perf_counter()
            index.search_sync(query, 3)
            policy.append(_ms(start))
            start = time.perf_counter()
            collection.query(
                query_embeddings=[vectors[query]],
                n_results=3,
                include=["documents", "metadatas", "distances"],
            )
            raw.append(_ms(start))
    burst = asyncio.run(_burst(index))
    return {
        "queries": len(QUERIES),
        "rounds": rounds,
        "chunks": index.count(),
        "policy_search_p50_ms": _p50(policy),
        "policy_search_p95_ms": round(sorted(policy)[int(0.95 * (len(policy) - 1))], 3),
        "raw_chroma_p50_ms": _p50(raw),
        "policy_search_vs_raw_chroma_ratio": round(_p50(policy) / max(_p50(raw), 1e-9), 2),
        "policy_search_uncached_p50_ms": _p50(uncached),
        **burst,
    }


async def _burst(index: PolicyIndex) -> dict[str, Any]:
    """200 concurrent searches, 64 distinct queries, cold cache: what a burst of players costs."""
    index._query_vector.cache_clear()
    queries = [f"{QUERIES[i % 64 % len(QUERIES)]} ({i % 64})" for i in range(200)]
    start = time.perf_counter()
    await asyncio.gather(*(index.search(q, 3) for q in queries))
    return {"burst_200_searches_s": round(_ms(start) / 1000, 3), "burst_distinct_queries": len(set(queries))}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--data-dir", type=Path, help="reuse a data dir (its policy index is built once)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="arca-bench-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        data_dir.mkdir(parents=True, exist_ok=True)
        index = make_policy_index(load_settings(data_dir=data_dir))
        try:
            figures = measure(index, args.rounds)
        finally:
            index.close()
    print(f"{'chunks':<8}{'policy p50 ms':>15}{'raw Chroma p50 ms':>19}{'ratio':>8}{'uncached p50 ms':>17}")
    print(
        f"{figures['chunks']:<8}{figures['policy_search_p50_ms']:>15}{figures['raw_chroma_p50_ms']:>19}"
        f"{figures['policy_search_vs_raw_chroma_ratio']:>8}{figures['policy_search_uncached_p50_ms']:>17}"
    )
    print(
        f"200 concurrent searches, {figures['burst_distinct_queries']} distinct: {figures['burst_200_searches_s']} s"
    )
    for key in ("policy_search_p50_ms", "raw_chroma_p50_ms", "policy_search_vs_raw_chroma_ratio"):
        print(f"{key}={figures[key]}")
    return figures


if __name__ == "__main__":
    main()
