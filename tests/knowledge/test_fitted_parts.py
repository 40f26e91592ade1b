"""The search model stored with the index (bot/knowledge/fitted.py, issue 51): a process start reads the
domain classifiers, the background vectors and the second model's chunk vectors instead of embedding
their sentences again; they are made again when the embedder, the bank or the policies change."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import numpy as np
import pytest

from bot.knowledge import fitted
from bot.knowledge.background import BACKGROUND
from bot.knowledge.domain import domain_bank
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.fitted import FILE_NAME, FittedParts
from bot.knowledge.index import PolicyIndex
from bot.knowledge.second_dense import SecondDense, USEEmbedder


class HashingEmbedder:
    """A real, tiny embedder (character bigrams hashed into 64 dimensions) that records every text it
    was asked to embed: a stand-in model whose calls can be counted."""

    dim = 64
    min_relevance = -1.0

    def __init__(self, name: str = "hashing-test-embedder") -> None:
        self.name = name
        self.texts: list[str] = []

    def _vectors(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for i in range(max(1, len(text) - 1)):
                digest = hashlib.blake2b(text[i : i + 2].encode("utf-8"), digest_size=2).digest()
                out[row, int.from_bytes(digest, "big") % self.dim] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vectors([text])[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._vectors(texts)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._vectors(texts)


@pytest.fixture
def new_process(monkeypatch: pytest.MonkeyPatch):
    """Call to forget what this process fitted, as a new process would (restored after the test)."""
    monkeypatch.setattr(fitted, "_PROCESS", {})

    def forget() -> None:
        monkeypatch.setattr(fitted, "_PROCESS", {})

    return forget


def _index(chroma: Path, main: HashingEmbedder, second: HashingEmbedder) -> PolicyIndex:
    return PolicyIndex(main, chroma_dir=chroma, second=SecondDense(second))


def _built(chroma: Path, policies: Path) -> None:
    """What `arca-bot index` does: build, then fit and store the search model."""
    index = _index(chroma, HashingEmbedder(), HashingEmbedder("hashing-second"))
    index.reindex(policies)
    index.fit_search_model()
    index.close()


def test_a_new_process_reads_the_search_model_and_embeds_only_the_query(
    tmp_path: Path, small_corpus: Path, new_process
) -> None:
    _built(tmp_path / "chroma", small_corpus)
    assert (tmp_path / "chroma" / FILE_NAME).is_file()
    new_process()

    main, second = HashingEmbedder(), HashingEmbedder("hashing-second")
    index = _index(tmp_path / "chroma", main, second)
    index.warm_up()
    main.texts.clear(), second.texts.clear()
    index.search_sync("쿠폰 최대 금액은 얼마인가요?")
    index.close()
    assert main.texts == ["쿠폰 최대 금액은 얼마인가요?"]
    assert second.texts == ["쿠폰 최대 금액은 얼마인가요?"]
    assert index.fitted.made == []


def test_the_warm_up_of_a_new_process_embeds_no_bank_background_or_chunk_text(
    tmp_path: Path, small_corpus: Path, new_process
) -> None:
    _built(tmp_path / "chroma", small_corpus)
    new_process()
    main, second = HashingEmbedder(), HashingEmbedder("hashing-second")
    index = _index(tmp_path / "chroma", main, second)
    index.warm_up()
    index.close()
    fixed = set(BACKGROUND) | set(domain_bank()[0]) | set(domain_bank()[1])
    assert not fixed & set(main.texts + second.texts)
    assert len(main.texts) <= 1 and len(second.texts) <= 1  # the warm-up's own probe query


def test_without_a_stored_model_the_first_search_fits_it_and_stores_it(
    tmp_path: Path, small_corpus: Path, new_process
) -> None:
    main, second = HashingEmbedder(), HashingEmbedder("hashing-second")
    index = _index(tmp_path / "chroma", main, second)
    index.reindex(small_corpus)
    index.search_sync("What is the largest coupon amount?")  # English: both models' classifiers count
    index.close()
    support = domain_bank()[0]
    assert set(support) <= set(main.texts) and set(support) <= set(second.texts)
    assert sorted(index.fitted.made) == sorted(
        [
            "domain:hashing-test-embedder",
            "domain:hashing-second",
            "background:hashing-test-embedder",
            "background:hashing-second",
        ]
    )
    new_process()
    again = _index(tmp_path / "chroma", HashingEmbedder(), HashingEmbedder("hashing-second"))
    again.search_sync("What is the largest coupon amount?")
    again.close()
    assert again.fitted.made == []


def test_another_embedder_fits_its_own_model(tmp_path: Path, small_corpus: Path, new_process) -> None:
    _built(tmp_path / "chroma", small_corpus)
    new_process()
    other = HashingEmbedder("another-model")
    index = _index(tmp_path / "chroma", other, HashingEmbedder("hashing-second"))
    index.reindex(small_corpus)  # the collection was built by another model: rebuilt
    index.fit_search_model()
    index.close()
    assert set(domain_bank()[0]) <= set(other.texts)
    assert "domain:another-model" in index.fitted.made
    assert "domain:hashing-second" not in index.fitted.made  # the second model did not change


def test_a_changed_bank_is_fitted_again(tmp_path: Path, new_process) -> None:
    parts = FittedParts(tmp_path)
    made: list[str] = []

    def make(label: str):
        def run() -> dict[str, np.ndarray]:
            made.append(label)
            return {"w": np.arange(3.0), "b": np.asarray(0.5)}

        return run

    first = parts.get("domain:m", "bank-v1", make("v1"))
    new_process()
    again = FittedParts(tmp_path).get("domain:m", "bank-v1", make("v1 again"))
    new_process()
    changed = FittedParts(tmp_path).get("domain:m", "bank-v2", make("v2"))
    assert made == ["v1", "v2"]
    assert np.array_equal(first["w"], again["w"]) and float(again["b"]) == 0.5
    assert float(changed["b"]) == 0.5
    assert FittedParts(tmp_path).load("domain:m", "bank-v1") is None  # replaced, not kept beside


def test_changed_policies_embed_only_the_changed_sections_in_the_next_process(
    tmp_path: Path, small_corpus: Path, new_process
) -> None:
    _built(tmp_path / "chroma", small_corpus)
    new_process()
    doc = next(small_corpus.glob("*.md"))
    doc.write_text(
        doc.read_text(encoding="utf-8") + "\n## 9. 추가 안내\n\n보라색 고양이 축제 안내입니다.\n", "utf-8"
    )
    second = HashingEmbedder("hashing-second")
    index = _index(tmp_path / "chroma", HashingEmbedder(), second)
    index.reindex(small_corpus)
    index.fit_search_model()
    index.close()
    assert second.texts and all("보라색 고양이" in t for t in second.texts)


def test_an_unreadable_stored_model_is_made_again(tmp_path: Path, new_process, caplog) -> None:
    (tmp_path / FILE_NAME).write_bytes(b"not a zip file")
    with caplog.at_level(logging.WARNING):
        part = FittedParts(tmp_path).get("x", "p", lambda: {"v": np.ones(2)})
    assert np.array_equal(part["v"], np.ones(2))
    assert "made again" in caplog.text
    new_process()
    assert FittedParts(tmp_path).load("x", "p") is not None


@pytest.mark.slow
def test_the_stored_model_gives_the_same_decisions_as_a_fresh_fit(
    shipped_index: PolicyIndex, e5: E5Embedder, use: USEEmbedder, new_process
) -> None:
    queries = [
        "보상 쿠폰 한도가 얼마예요?",
        "How long is a coupon valid?",
        "닉네임 바꾸는 데 얼마나 걸려요?",
        "오늘 점심 뭐 먹을까요?",
        "what is the capital of France?",
        "환불 받고 싶어요",
    ]
    fresh = [shipped_index.explain(q, rest=False) for q in queries]
    shipped_index.fit_search_model()
    new_process()
    chroma = shipped_index.store.chroma_dir
    assert chroma is not None and (chroma / FILE_NAME).is_file()
    stored = PolicyIndex(e5, chroma_dir=chroma, second=SecondDense(use))
    read = [stored.explain(q, rest=False) for q in queries]
    stored.close()
    assert stored.fitted.made == []
    for query, (hits, evidence), (hits_again, evidence_again) in zip(queries, fresh, read, strict=True):
        assert evidence_again == evidence, query
        assert evidence_again.abstains(stored.fusion) == evidence.abstains(shipped_index.fusion), query
        assert [h.section for h in hits_again] == [h.section for h in hits], query
