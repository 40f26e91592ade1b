"""What tests under tests/knowledge/ share (helpers and constants; the fixtures are in its conftest.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from bot.knowledge.documents import chunk_documents, load_policies
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.evaluation import EvalCase
from tests.support.context import LUNA, make_ctx
from tools.base import Actor, ToolContext

REPO = Path(__file__).resolve().parents[2]
POLICIES = REPO / "policies"
EVAL_FILE = REPO / "tests" / "retrieval_eval.yaml"
KOREAN_ONLY_QUESTIONS = REPO / "tests" / "knowledge" / "korean_only_questions"
"""The questions `arca-bot questions` wrote for the Korean-only copy of policies/ (from its own text)."""


def assert_fresh_eval_set(cases: Sequence[EvalCase], others: Iterable[EvalCase]) -> set[tuple[str, str]]:
    """A blind eval set's cases each point at a real section of policies/, copy no policy's words, are
    in no other set and are not repeated; returns the (document, section) pairs of policies/."""
    chunks = chunk_documents(load_policies(POLICIES))
    sections = {(c.source, c.section) for c in chunks}
    corpus = "\n".join(c.text for c in chunks)
    seen = {c.query.casefold() for c in others}
    for case in cases:
        assert case.off_topic or (case.source, case.section) in sections, case
        assert case.query.rstrip("?") not in corpus, f"copied from a document: {case.query}"
        assert case.query.casefold() not in seen, f"also in another set: {case.query}"
    assert len({c.query.casefold() for c in cases}) == len(cases)
    return sections


class CountingEmbedder:
    """A real embedder seen through a window: records what it was asked to embed, and from which thread.

    `name` can be overridden to stand for a different model (the index must then rebuild).
    """

    def __init__(self, inner: E5Embedder, name: str | None = None) -> None:
        self.inner = inner
        self.name = name or inner.name
        self.dim = inner.dim
        self.min_relevance = inner.min_relevance
        self.passages: list[str] = []
        self.query_threads: list[str] = []

    def embed_query(self, text: str) -> np.ndarray:
        self.query_threads.append(threading.current_thread().name)
        return self.inner.embed_query(text)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        self.passages.extend(texts)
        return self.inner.embed_passages(texts)


SMALL_DOCS = {
    "coupons.md": """---
id: coupons
title: 보상 정책
lang: ko
version: "1"
effective: 2026-01-01
---

## 1. 적용 대상

배송 지연 상태인 주문만 보상 쿠폰을 받을 수 있습니다.

> EN: Only delayed orders are eligible for a compensation coupon.

## 2. 발급 한도

쿠폰 1장은 최대 20,000원입니다.

> EN: A coupon is worth at most 20,000 KRW.
""",
    "name.md": """---
id: name
title: 이름 변경
lang: ko
version: "1"
effective: 2026-01-01
---

## 1. 재변경 제한

이름을 바꾼 뒤 30일 동안은 다시 바꿀 수 없습니다.

> EN: After a rename you must wait 30 days.
""",
    "privacy.md": """---
id: privacy
title: 개인정보
lang: ko
version: "1"
effective: 2026-01-01
---

## 1. 보관 기간

결제 기록은 5년 동안 보관합니다.

> EN: Payment records are kept for 5 years.
""",
}


def write_small_corpus(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in SMALL_DOCS.items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory


def policy_ctx(searcher: object | None, *, locale: str = "ko", linked: bool = False) -> ToolContext:
    """A console tool context with `searcher` as the policy search, for a linked player or not."""
    actor = LUNA if linked else Actor(discord_id="9001")
    return make_ctx(
        actor, thread_id="console:test", run_id="r1", locale=locale, searcher=searcher, call_id="c1"
    )
