"""Fixtures for the knowledge-base tests: one real e5 embedder, a small corpus, the shipped-corpus indexes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.knowledge.embedders import E5Embedder
from bot.knowledge.evaluation import EvalCase, load_eval_cases, write_korean_only_copy
from bot.knowledge.index import PolicyIndex
from bot.knowledge.second_dense import SecondDense, USEEmbedder
from tests.support.knowledge import (
    EVAL_FILE,
    KOREAN_ONLY_QUESTIONS,
    POLICIES,
    CountingEmbedder,
    write_small_corpus,
)


@pytest.fixture(scope="session")
def e5() -> E5Embedder:
    return E5Embedder(num_threads=1)


@pytest.fixture(scope="session")
def use() -> USEEmbedder:
    """The second dense model (multilingual USE v3), loaded once per session."""
    return USEEmbedder()


@pytest.fixture
def small_corpus(tmp_path: Path) -> Path:
    return write_small_corpus(tmp_path / "policies")


@pytest.fixture
def counting(e5: E5Embedder) -> CountingEmbedder:
    return CountingEmbedder(e5)


@pytest.fixture(scope="session")
def eval_cases() -> list[EvalCase]:
    return load_eval_cases(EVAL_FILE)


@pytest.fixture(scope="session")
def shipped_index(
    e5: E5Embedder, use: USEEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PolicyIndex]:
    """The shipped policies/, indexed once per session with the default embedders."""
    index = PolicyIndex(e5, chroma_dir=tmp_path_factory.mktemp("chroma-shipped"), second=SecondDense(use))
    index.build(POLICIES)
    yield index
    index.close()


@pytest.fixture(scope="session")
def korean_only_index(
    e5: E5Embedder, use: USEEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PolicyIndex]:
    """The shipped policies with every `> EN:` line removed: a Korean-only set an operator might bring."""
    corpus = write_korean_only_copy(
        POLICIES, tmp_path_factory.mktemp("korean-only") / "policies", questions_from=KOREAN_ONLY_QUESTIONS
    )
    index = PolicyIndex(e5, chroma_dir=tmp_path_factory.mktemp("chroma-korean-only"), second=SecondDense(use))
    index.build(corpus)
    yield index
    index.close()
