"""PolicyIndex on a real embedded Chroma: incremental reindex, rebuilds, persistence, async search."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from bot.knowledge import chroma
from bot.knowledge.documents import KnowledgeError, PolicyFormatError
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.index import EmptyQueryError, PolicyIndex
from tests.support.knowledge import CountingEmbedder


def _sources(index: PolicyIndex, query: str = "정책", top_k: int = 10) -> set[str]:
    return {h.source for h in index.explain(query)[0][:top_k]}


def test_first_build_embeds_every_chunk_and_records_the_embedder(
    tmp_path: Path, small_corpus: Path, counting: CountingEmbedder
) -> None:
    index = PolicyIndex(counting, chroma_dir=tmp_path / "chroma")
    counts = index.build(small_corpus)
    assert (counts.added, counts.updated, counts.removed, counts.unchanged, counts.rebuilt) == (
        4,
        0,
        0,
        0,
        True,
    )
    assert len(counting.passages) == 4
    collection = index._open()
    assert collection.metadata["embedder"] == counting.name
    assert collection.metadata["dim"] == 384


def test_reindex_reembeds_only_changed_chunks_and_removes_deleted_ones(
    tmp_path: Path, small_corpus: Path, counting: CountingEmbedder
) -> None:
    index = PolicyIndex(counting, chroma_dir=tmp_path / "chroma")
    index.build(small_corpus)
    counting.passages.clear()

    coupons = small_corpus / "coupons.md"
    coupons.write_text(coupons.read_text(encoding="utf-8").replace("20,000원", "25,000원"), encoding="utf-8")
    (small_corpus / "privacy.md").unlink()
    counts = index.reindex(small_corpus)

    assert (counts.added, counts.updated, counts.removed, counts.unchanged, counts.rebuilt) == (
        0,
        1,
        1,
        2,
        False,
    )
    assert len(counting.passages) == 1 and "25,000원" in counting.passages[0]
    assert index.count() == 3
    assert _sources(index) == {"coupons.md", "name.md"}
    hit = index.search_sync("쿠폰 최대 금액", top_k=1)[0]
    assert "25,000원" in hit.text


def test_unchanged_reindex_embeds_nothing(
    tmp_path: Path, small_corpus: Path, counting: CountingEmbedder
) -> None:
    index = PolicyIndex(counting, chroma_dir=tmp_path / "chroma")
    index.build(small_corpus)
    counting.passages.clear()
    counts = index.reindex()  # remembers the directory it was built from
    assert (counts.added, counts.updated, counts.removed, counts.unchanged) == (0, 0, 0, 4)
    assert counting.passages == []


def test_index_holds_exactly_the_directory_it_was_last_given(
    tmp_path: Path, small_corpus: Path, counting: CountingEmbedder
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "name.md").write_text((small_corpus / "name.md").read_text(encoding="utf-8"), encoding="utf-8")
    index = PolicyIndex(counting, chroma_dir=tmp_path / "chroma")
    index.build(small_corpus)
    counts = index.build(other)
    assert counts.removed == 3 and counts.unchanged == 1
    assert _sources(index) == {"name.md"}


def test_a_different_embedder_triggers_a_full_rebuild(
    tmp_path: Path, small_corpus: Path, e5: E5Embedder
) -> None:
    first = CountingEmbedder(e5)
    PolicyIndex(first, chroma_dir=tmp_path / "chroma").build(small_corpus)

    second = CountingEmbedder(e5, name="another-model")
    index = PolicyIndex(second, chroma_dir=tmp_path / "chroma")
    assert not index.is_built()  # an index of another model is not usable as is
    counts = index.ensure_built(small_corpus)
    assert counts is not None and counts.rebuilt and counts.added == 4
    assert len(second.passages) == 4
    assert index._open().metadata["embedder"] == "another-model"


def test_index_persists_and_ensure_built_leaves_an_existing_index_alone(
    tmp_path: Path, small_corpus: Path, e5: E5Embedder
) -> None:
    PolicyIndex(CountingEmbedder(e5), chroma_dir=tmp_path / "chroma").build(small_corpus)
    reopened_embedder = CountingEmbedder(e5)
    reopened = PolicyIndex(reopened_embedder, chroma_dir=tmp_path / "chroma")
    assert reopened.ensure_built(small_corpus) is None
    assert reopened_embedder.passages == []
    hits = reopened.search_sync("이름을 또 바꾸려면 며칠 기다려야 해?", top_k=1)
    assert hits[0].source == "name.md" and hits[0].section == "1. 재변경 제한"


def test_malformed_document_leaves_the_index_untouched(
    tmp_path: Path, small_corpus: Path, counting: CountingEmbedder
) -> None:
    index = PolicyIndex(counting, chroma_dir=tmp_path / "chroma")
    index.build(small_corpus)
    (small_corpus / "broken.md").write_text(
        "---\nid: broken\ntitle: [x\n---\n\n## a\n\nb\n", encoding="utf-8"
    )
    (small_corpus / "privacy.md").unlink()
    with pytest.raises(PolicyFormatError) as info:
        index.reindex(small_corpus)
    assert info.value.path.name == "broken.md"
    assert index.count() == 4
    assert "privacy.md" in _sources(index)


def test_empty_query_is_refused(tmp_path: Path, small_corpus: Path, counting: CountingEmbedder) -> None:
    index = PolicyIndex(counting, chroma_dir=tmp_path / "chroma")
    index.build(small_corpus)
    with pytest.raises(EmptyQueryError):
        index.search_sync("   ")


def test_search_before_any_build_finds_nothing_and_reindex_without_a_directory_is_an_error(
    tmp_path: Path, counting: CountingEmbedder
) -> None:
    index = PolicyIndex(counting, chroma_dir=tmp_path / "chroma")
    assert index.search_sync("쿠폰") == []
    with pytest.raises(KnowledgeError, match="no policy directory"):
        index.reindex()


def test_hits_carry_source_section_and_citation(
    tmp_path: Path, small_corpus: Path, counting: CountingEmbedder
) -> None:
    index = PolicyIndex(counting, chroma_dir=tmp_path / "chroma")
    index.build(small_corpus)
    hit = index.search_sync("쿠폰 한도가 얼마예요?", top_k=1)[0]
    assert (hit.source, hit.doc_id, hit.section, hit.lang) == ("coupons.md", "coupons", "2. 발급 한도", "ko")
    assert hit.citation == "[보상 정책 §2 발급 한도]"
    assert "20,000원" in hit.text


def test_relevance_floor_drops_passages_below_it(
    tmp_path: Path, small_corpus: Path, counting: CountingEmbedder
) -> None:
    index = PolicyIndex(counting, chroma_dir=tmp_path / "chroma", min_score=0.999)
    index.build(small_corpus)
    assert index.search_sync("쿠폰 한도가 얼마예요?") == []


async def test_async_search_embeds_on_the_index_worker_not_the_event_loop(
    tmp_path: Path, small_corpus: Path, counting: CountingEmbedder
) -> None:
    index = PolicyIndex(counting, chroma_dir=tmp_path / "chroma")
    index.reindex(small_corpus)
    loop_thread = threading.current_thread().name
    results = await asyncio.gather(index.search("쿠폰 한도"), index.search("이름 변경 제한"))
    assert results[0][0].source == "coupons.md" and results[1][0].source == "name.md"
    assert counting.query_threads and all(name != loop_thread for name in counting.query_threads)
    assert all(name.startswith("policy-index-search") for name in counting.query_threads)
    index.close()


def test_search_follows_a_reindex_made_by_another_process(
    tmp_path: Path, small_corpus: Path, e5: E5Embedder
) -> None:
    serving = PolicyIndex(CountingEmbedder(e5), chroma_dir=tmp_path / "chroma")
    serving.build(small_corpus)
    assert "privacy.md" in _sources(serving)

    (small_corpus / "privacy.md").unlink()
    PolicyIndex(CountingEmbedder(e5), chroma_dir=tmp_path / "chroma").reindex(
        small_corpus
    )  # e.g. `arca-bot index`
    assert _sources(serving) == {"coupons.md", "name.md"}
    assert all(h.source != "privacy.md" for h in serving.explain("결제 기록 보관 기간")[0])


def test_a_settled_index_file_is_read_again_only_after_something_writes_to_it(
    tmp_path: Path, small_corpus: Path, e5: E5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    serving = PolicyIndex(CountingEmbedder(e5), chroma_dir=tmp_path / "chroma")
    serving.build(small_corpus)
    monkeypatch.setattr(chroma, "SETTLED_S", 0.0)  # trust the file at once instead of after 2 s
    reads: list[int] = []
    read = serving.store.get
    monkeypatch.setattr(serving.store, "get", lambda: reads.append(1) or read())

    assert "privacy.md" in _sources(serving)
    assert "privacy.md" in _sources(serving)
    assert len(reads) == 1  # the second search found the file as the first had read it

    (small_corpus / "privacy.md").unlink()
    PolicyIndex(CountingEmbedder(e5), chroma_dir=tmp_path / "chroma").reindex(small_corpus)
    assert _sources(serving) == {"coupons.md", "name.md"}  # the write changed the file's stamp
    assert len(reads) == 2
