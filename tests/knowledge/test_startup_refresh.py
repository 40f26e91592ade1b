"""The bot's start-up brings an existing policy index up to date with its directory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.app import PROJECT_ROOT, IndexBuildCancelled, make_policy_index, make_policy_index_safely
from bot.config import load_settings
from bot.knowledge.documents import chunk_documents, load_policies


@pytest.mark.slow
def test_start_up_reembeds_a_policy_edited_since_the_last_build(tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    shutil.copy(PROJECT_ROOT / "policies" / "name_change.md", policies / "name_change.md")
    settings = load_settings(ARCA_DATA_DIR=str(tmp_path / "var"), ARCA_POLICIES_DIR=str(policies))
    first = make_policy_index(settings)
    assert first.count() > 0
    first.close()

    doc = policies / "name_change.md"
    doc.write_text(
        doc.read_text(encoding="utf-8")
        + "\n## 특별 안내\n\n닉네임 변경권은 보라색 고양이 축제 기간에 반값입니다.\n",
        encoding="utf-8",
    )
    second = make_policy_index(settings)
    hits = second.search_sync("보라색 고양이 축제 닉네임 변경권 할인", top_k=1)
    second.close()
    assert hits and "보라색 고양이" in hits[0].text


@pytest.mark.slow
def test_a_build_stopped_between_embedding_batches_is_completed_by_the_next_start(tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    shutil.copytree(PROJECT_ROOT / "policies", policies)
    settings = load_settings(ARCA_DATA_DIR=str(tmp_path / "var"), ARCA_POLICIES_DIR=str(policies))
    asked: list[int] = []

    def cancelled() -> bool:  # the server is asked to stop after the first embedding batch
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(IndexBuildCancelled):
        make_policy_index_safely(settings, cancelled=cancelled)
    assert len(asked) == 4  # before the build, at 0 chunks, after batch 1, after batch 2: stopped there

    index = make_policy_index(settings)
    hits = index.search_sync("배송 지연 보상 쿠폰 한도", top_k=1)
    stored = index.count()
    index.close()
    assert stored == len(chunk_documents(load_policies(policies)))
    assert hits and "한도" in hits[0].section
