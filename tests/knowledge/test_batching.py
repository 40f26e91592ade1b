"""Searches that arrive together are served together: one embedding batch, a bounded query-vector cache,
and one caller's bad query failing that caller alone."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import numpy as np
import pytest

from bot.knowledge.batching import QueryVectors
from bot.knowledge.domain import DomainClassifier
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.index import SEARCH_WORKERS, EmptyQueryError, PolicyIndex


class BatchRecordingEmbedder:
    """The real e5 embedder; records each query batch, and can hold the first `held` batches at a gate."""

    def __init__(self, inner: E5Embedder, held: int = 0) -> None:
        self.inner = inner
        self.name, self.dim, self.min_relevance = inner.name, inner.dim, inner.min_relevance
        self.batches: list[list[str]] = []
        self.gate = threading.Event()
        self.all_held = threading.Event()
        """Set once `held` batches are waiting at the gate (every worker lane is busy)."""
        self.held = held
        self._lock = threading.Lock()

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            self.batches.append(list(texts))
            wait = len(self.batches) <= self.held
            if len(self.batches) == self.held:
                self.all_held.set()
        if wait:
            assert self.gate.wait(30), "the test never opened the gate"
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_passages(texts)


def test_batched_e5_query_vectors_are_the_one_by_one_vectors(e5: E5Embedder) -> None:
    texts = ["쿠폰 한도", "이름 변경 제한", "how do refunds work?"]
    batch = e5.embed_queries(texts)
    assert batch.shape == (3, e5.dim)
    for text, row in zip(texts, batch, strict=True):
        np.testing.assert_allclose(row, e5.embed_query(text), atol=1e-6)


def test_preloading_loads_the_one_model_every_lane_shares() -> None:
    first, second = E5Embedder(num_threads=1), E5Embedder(num_threads=1)
    first.preload(5)
    assert first._model is not None
    vectors = second.embed_queries(["쿠폰 한도"])
    assert second._model is first._model  # the process's one model
    np.testing.assert_allclose(vectors[0], first.embed_query("쿠폰 한도"), atol=1e-6)


async def test_searches_arriving_while_the_lanes_are_busy_are_embedded_in_one_batch(
    tmp_path: Path, small_corpus: Path, e5: E5Embedder
) -> None:
    embedder = BatchRecordingEmbedder(e5, held=2)
    index = PolicyIndex(embedder, chroma_dir=tmp_path / "chroma")
    index.build(small_corpus)
    DomainClassifier(e5).logit(np.zeros(e5.dim))  # the process's one fit of the off-topic classifier
    try:
        busy = [asyncio.ensure_future(index.search(q)) for q in ("쿠폰 한도", "이름 변경 제한")]
        assert await asyncio.to_thread(embedder.all_held.wait, 30)  # both worker lanes are busy now
        later = ["배송 지연 쿠폰", "이름을 다시 바꾸기", "배송 지연 쿠폰", "이름을 다시 바꾸기", "쿠폰 한도"]
        waiting = [asyncio.ensure_future(index.search(q)) for q in later]
        await asyncio.sleep(0.05)
        assert len(embedder.batches) == 2, "a search started while both lanes were busy"
        embedder.gate.set()
        results = await asyncio.gather(*busy, *waiting)
    finally:
        index.close()
    # The five waiting searches ran as one batch: their two new distinct queries in ONE model call
    # ("쿠폰 한도" was cached by the first lane by then, or is embedded in the same call).
    assert len(embedder.batches) == 3
    assert set(embedder.batches[2]) - {"쿠폰 한도"} == {"배송 지연 쿠폰", "이름을 다시 바꾸기"}
    assert len(embedder.batches[2]) == len(set(embedder.batches[2]))
    for query, hits in zip(["쿠폰 한도", "이름 변경 제한", *later], results, strict=True):
        assert hits == index.search_sync(query), query
    assert results[0][0].source == "coupons.md" and results[1][0].source == "name.md"


async def test_an_empty_query_in_a_batch_fails_only_its_own_search(
    tmp_path: Path, small_corpus: Path, e5: E5Embedder
) -> None:
    index = PolicyIndex(e5, chroma_dir=tmp_path / "chroma")
    index.build(small_corpus)
    try:
        out = index.search_many_sync([("   ", 3), ("쿠폰 한도", 3)])
        assert isinstance(out[0], EmptyQueryError)
        assert out[1] == index.search_sync("쿠폰 한도")
        empty, hits = await asyncio.gather(
            index.search(""), index.search("쿠폰 한도"), return_exceptions=True
        )
    finally:
        index.close()
    assert isinstance(empty, EmptyQueryError)
    assert isinstance(hits, list) and hits[0].source == "coupons.md"


def test_a_search_builds_only_the_hits_it_returns_and_they_are_the_explained_ones(
    tmp_path: Path, small_corpus: Path, e5: E5Embedder
) -> None:
    index = PolicyIndex(e5, chroma_dir=tmp_path / "chroma")
    index.build(small_corpus)
    try:
        for query in ("쿠폰 한도", "이름 변경 제한", "how do refunds work?"):
            every, _ = index.explain(query, top_k=2)
            served, _ = index.explain(query, top_k=2, rest=False)
            assert len(every) > 2  # the evaluation ranks every candidate
            assert served == every[:2]
            assert index.search_sync(query, top_k=2) in ([], served)
    finally:
        index.close()


def test_the_query_vector_cache_is_bounded_and_embeds_each_miss_once(e5: E5Embedder) -> None:
    embedder = BatchRecordingEmbedder(e5)
    vectors = QueryVectors(embedder, maxsize=2)
    first = vectors.many(["a", "b", "a", "c"])
    assert embedder.batches == [["a", "b", "c"]]  # distinct misses, one call
    np.testing.assert_array_equal(first[0], first[2])
    assert len(vectors) == 2  # "a" was evicted (least recently used)
    vectors("c")
    assert len(embedder.batches) == 1
    vectors("a")
    assert embedder.batches[-1] == ["a"]
    vectors.cache_clear()
    assert len(vectors) == 0


def test_a_query_another_lane_is_embedding_is_waited_for_not_embedded_again(e5: E5Embedder) -> None:
    embedder = BatchRecordingEmbedder(e5, held=1)
    vectors = QueryVectors(embedder, maxsize=16)
    first: list[np.ndarray] = []
    lane = threading.Thread(target=lambda: first.extend(vectors.many(["쿠폰 한도", "배송 지연 쿠폰"])))
    lane.start()
    assert embedder.all_held.wait(30)  # the first lane is embedding both
    second: list[np.ndarray] = []
    other = threading.Thread(target=lambda: second.extend(vectors.many(["배송 지연 쿠폰", "이름 변경 제한"])))
    other.start()
    other.join(0.3)
    assert other.is_alive(), "the second lane did not wait for the query the first is embedding"
    embedder.gate.set()
    lane.join(30)
    other.join(30)
    assert embedder.batches == [["쿠폰 한도", "배송 지연 쿠폰"], ["이름 변경 제한"]]
    np.testing.assert_array_equal(second[0], first[1])
    np.testing.assert_allclose(second[1], e5.embed_query("이름 변경 제한"), atol=1e-6)


def test_a_failed_embedding_fails_its_waiters_and_is_tried_again_later(e5: E5Embedder) -> None:
    class FailingOnce(BatchRecordingEmbedder):
        def embed_queries(self, texts: list[str]) -> np.ndarray:
            out = super().embed_queries(texts)
            if len(self.batches) == 1:
                raise RuntimeError("model handle lost")
            return out

    embedder = FailingOnce(e5, held=1)
    vectors = QueryVectors(embedder, maxsize=16)
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            vectors.many(["쿠폰 한도"])
        except RuntimeError as exc:
            errors.append(exc)

    lanes = [threading.Thread(target=ask) for _ in range(2)]
    lanes[0].start()
    assert embedder.all_held.wait(30)
    lanes[1].start()
    lanes[1].join(0.2)
    embedder.gate.set()
    for lane in lanes:
        lane.join(30)
    assert [str(e) for e in errors] == ["model handle lost"] * 2 and len(embedder.batches) == 1
    np.testing.assert_allclose(vectors("쿠폰 한도"), e5.embed_query("쿠폰 한도"), atol=1e-6)
    assert len(embedder.batches) == 2


@pytest.mark.parametrize("cancel_first", [True, False])
async def test_a_cancelled_search_does_not_break_the_others(
    tmp_path: Path, small_corpus: Path, e5: E5Embedder, cancel_first: bool
) -> None:
    embedder = BatchRecordingEmbedder(e5, held=2)
    index = PolicyIndex(embedder, chroma_dir=tmp_path / "chroma")
    index.build(small_corpus)
    DomainClassifier(e5).logit(np.zeros(e5.dim))  # the process's one fit of the off-topic classifier
    try:
        busy = [asyncio.ensure_future(index.search(q)) for q in ("쿠폰 한도", "이름 변경 제한")]
        assert await asyncio.to_thread(embedder.all_held.wait, 30)
        waiting = [asyncio.ensure_future(index.search(q)) for q in ("배송 지연 쿠폰", "이름을 다시 바꾸기")]
        await asyncio.sleep(0)
        (busy[0] if cancel_first else waiting[0]).cancel()
        embedder.gate.set()
        done = await asyncio.gather(*busy, *waiting, return_exceptions=True)
    finally:
        index.close()
    cancelled = 0 if cancel_first else 2
    assert isinstance(done[cancelled], asyncio.CancelledError)
    assert all(isinstance(r, list) for i, r in enumerate(done) if i != cancelled)


def test_the_start_warms_each_search_lane_on_a_thread_of_its_own(
    tmp_path: Path, small_corpus: Path, e5: E5Embedder
) -> None:
    index = PolicyIndex(e5, chroma_dir=tmp_path / "chroma")
    index.build(small_corpus)
    try:
        index.warm_up()
        lanes = index._executors["search"]._threads  # Kiwi's first analysis on a thread costs 5–7 ms more
        assert len(lanes) == SEARCH_WORKERS and all(t.is_alive() for t in lanes)
        hits = index.search_sync("쿠폰 한도")
    finally:
        index.close()
    assert hits and hits[0].source == "coupons.md"
