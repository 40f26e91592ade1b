"""A large synthetic policy corpus for timing search (bench/retrieval.py): policy-shaped Markdown with
random text, and an embedder whose passage vectors are random so 20,000 chunks index in seconds."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import numpy as np

from bot.knowledge.embedders import E5Embedder


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


def synthetic_corpus(directory: Path, chunks: int, sections_per_doc: int = 50, seed: int = 7) -> Path:
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
