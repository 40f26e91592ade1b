"""The policy index against a real Chroma server (ARCA_CHROMA_URL): index, search, re-index, and a
one-line error when the server is down."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.doctor import check_chroma_server, check_policy_index
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.index import PolicyIndex
from tests.support.services import CHROMA_ENV

DOC = """---
id: {id}
title: {title}
lang: ko
version: "1"
effective: 2026-01-01
---

## 1. {section}

{body}
"""

COUPONS = DOC.format(
    id="coupons",
    title="보상 정책",
    section="발급 한도",
    body="보상 쿠폰 1장은 최대 20,000원이며 1,000원 단위로 발급됩니다.",
)
NAMES = DOC.format(
    id="name",
    title="이름 변경",
    section="재변경 제한",
    body="캐릭터 이름을 바꾼 뒤 30일 동안은 다시 바꿀 수 없습니다.",
)


def write_policies(root: Path, **docs: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for old in root.glob("*.md"):
        old.unlink()
    for name, text in docs.items():
        (root / f"{name}.md").write_text(text, encoding="utf-8")
    return root


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def embedder() -> E5Embedder:
    return E5Embedder()


@pytest.fixture
def server_index(embedder: E5Embedder) -> Iterator[PolicyIndex]:
    """An index in its own collection on the shared test server, dropped afterwards."""
    name = f"arca_test_{uuid.uuid4().hex[:10]}"
    index = PolicyIndex(embedder, chroma_url=os.environ[CHROMA_ENV], collection_name=name)
    try:
        yield index
    finally:
        index.store.client().delete_collection(name)
        index.close()


@pytest.mark.slow
@pytest.mark.chroma_server
def test_index_search_and_reindex_on_a_chroma_server(server_index: PolicyIndex, tmp_path: Path) -> None:
    policies = write_policies(tmp_path / "policies", coupons=COUPONS, name=NAMES)
    first = server_index.reindex(policies)
    assert (first.added, first.rebuilt) == (2, True)
    hits = server_index.search_sync("쿠폰 최대 금액이 얼마예요?", top_k=1)
    assert hits[0].source == "coupons.md" and "20,000원" in hits[0].text

    # Another process (a second bot, `arca-bot index`) sees the same collection on the server.
    other = PolicyIndex(
        server_index.embedder,
        chroma_url=os.environ[CHROMA_ENV],
        collection_name=server_index.store.collection_name,
    )
    assert other.count() == 2 and other.search_sync("이름 다시 변경", top_k=1)[0].source == "name.md"

    write_policies(policies, coupons=COUPONS.replace("20,000원", "30,000원"))
    second = server_index.reindex(policies)
    assert (second.updated, second.removed, second.added, second.rebuilt) == (1, 1, 0, False)
    assert other.count() == 1
    assert "30,000원" in other.search_sync("쿠폰 최대 금액", top_k=1)[0].text
    other.close()


@pytest.mark.chroma_server
async def test_doctor_sees_the_chroma_server_heartbeat(tmp_path: Path) -> None:
    settings = load_settings(ARCA_DATA_DIR=str(tmp_path), ARCA_CHROMA_URL=os.environ[CHROMA_ENV])
    check = await check_policy_index(settings)
    assert check.status == "ok" and "heartbeat" in check.detail


async def test_doctor_says_when_the_chroma_server_is_down() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    check = await check_chroma_server(url, wait=3.0)
    assert check.status == "fail" and url in check.detail and "not reachable" in check.detail
    assert "ARCA_CHROMA_URL" in check.fix


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["index"], ["search", "쿠폰 한도"]])
def test_cli_with_the_chroma_server_down_prints_one_line_without_a_traceback(
    argv: list[str], tmp_path: Path
) -> None:
    policies = write_policies(tmp_path / "policies", coupons=COUPONS)
    env = {
        **os.environ,
        "ARCA_DATA_DIR": str(tmp_path / "var"),
        "ARCA_CHROMA_URL": f"http://127.0.0.1:{closed_port()}",
        "ARCA_POLICIES_DIR": str(policies),
        "ARCA_LOG_LEVEL": "WARNING",
    }
    done = subprocess.run(
        [sys.executable, "-m", "bot", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Chroma server" in lines[0], done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.chroma_server
@pytest.mark.slow
def test_cli_index_and_search_against_the_chroma_server(tmp_path: Path) -> None:
    policies = write_policies(tmp_path / "policies", coupons=COUPONS, name=NAMES)
    env = {
        **os.environ,
        "ARCA_DATA_DIR": str(tmp_path / "var"),
        "ARCA_CHROMA_URL": os.environ[CHROMA_ENV],
        "ARCA_LOG_LEVEL": "WARNING",
    }
    run = lambda *argv: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "bot", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    indexed = run("index", "--policies", str(policies))
    assert indexed.returncode == 0, indexed.stderr
    assert "(2 chunks)" in indexed.stdout
    found = run("search", "이름을 바꾼 뒤 다시 바꾸려면?", "--top-k", "1", "--json")
    assert found.returncode == 0, found.stderr
    import json

    hits = json.loads(found.stdout)
    assert [h["source"] for h in hits] == ["name.md"]
    assert not (tmp_path / "var" / "chroma").exists()  # nothing went to an embedded index
