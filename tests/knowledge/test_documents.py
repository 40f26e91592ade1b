"""Policy documents: the shipped corpus is complete and consistent; malformed files are named by line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bot.knowledge.documents import (
    KnowledgeError,
    PolicyFormatError,
    chunk_document,
    chunk_documents,
    load_policies,
    parse_policy,
    strip_english_summaries,
)
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.evaluation import write_korean_only_copy
from bot.store import ORDER_STATUSES
from tests.support.knowledge import POLICIES

REQUIRED_TOPICS = {
    "compensation",
    "delivery",
    "refunds",
    "cash-shop-undelivered",
    "duplicate-payments",
    "minors-payments",
    "account-security",
    "sanctions",
    "name-change",
    "gifts-trading",
    "event-rewards",
    "maintenance-compensation",
    "bug-exploitation",
    "privacy",
    "contact-staff",
}

DOCUMENTED_COUPON_DEFAULTS = {
    "eligible_statuses": ["delayed"],
    "min_amount": 1000,
    "max_amount": 20000,
    "amount_step": 1000,
    "daily_max_count": 3,
    "daily_max_amount": 50000,
    "staff_max_amount": 100000,
    "valid_days": 30,
}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_corpus_covers_every_required_topic_with_front_matter() -> None:
    docs = load_policies(POLICIES)
    assert len(docs) >= 15
    assert REQUIRED_TOPICS <= {d.doc_id for d in docs}
    for doc in docs:
        assert (
            doc.title
            and doc.lang == "ko"
            and doc.version
            and re.fullmatch(r"\d{4}-\d{2}-\d{2}", doc.effective)
        )
        assert len(doc.sections) >= 3, doc.source


def test_every_shipped_section_has_an_english_summary_line() -> None:
    for doc in load_policies(POLICIES):
        for section in doc.sections:
            assert re.search(r"^> EN: \S", section.body, re.MULTILINE), f"{doc.source} §{section.title}"


def test_shipped_amounts_use_thousands_separators() -> None:
    for path in sorted(POLICIES.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        bare = re.findall(r"(?<![\d,])\d{4,}(?=\s*(원|KRW|골드|아르카 캐시|Arca Cash|gold))", text)
        assert not bare, f"{path.name}: amounts without separators: {bare}"


def _coupon_rule_expectations(rules: dict[str, object]) -> list[str]:
    """Every number of the rules, written as the document must write it, plus the eligible status labels."""
    expected: list[str] = []
    for key, value in rules.items():
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            if key.endswith(("amount", "step")):
                expected.append(f"{value:,}원")  # an amount: with separators and the unit
            elif key.endswith("days"):
                expected.append(f"{value}일")
            elif key.endswith("count"):
                expected.append(f"{value}장")
            else:
                expected.append(f"{value:,}")
        elif isinstance(value, list):
            expected.extend(ORDER_STATUSES[str(v)] for v in value if str(v) in ORDER_STATUSES)
    return expected


@pytest.mark.parametrize("source", ["documented defaults", "policies/coupon_rules.yaml"])
def test_coupon_policy_quotes_the_coupon_rules_numbers(source: str) -> None:
    if source == "documented defaults":
        rules: dict[str, object] = DOCUMENTED_COUPON_DEFAULTS
    else:
        rules_file = POLICIES / "coupon_rules.yaml"
        # the yaml is another engineer's file; until it lands the documented defaults stand in for it
        rules = (
            yaml.safe_load(rules_file.read_text(encoding="utf-8"))
            if rules_file.exists()
            else DOCUMENTED_COUPON_DEFAULTS
        )
    text = (POLICIES / "compensation.md").read_text(encoding="utf-8")
    for needle in _coupon_rule_expectations(rules):
        assert needle in text, f"compensation.md does not state {needle} ({source})"
    if rules.get("approval_threshold") in (None, 0):
        assert "승인 절차는 없" in text
    else:
        assert f"{rules['approval_threshold']:,}" in text


def test_invalid_yaml_in_front_matter_is_reported_with_file_and_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "bad.md",
        '---\nid: bad\ntitle: 제목\nlang: [ko\nversion: "1"\neffective: 2026-01-01\n---\n\n## 1. 본문\n\n내용\n',
    )
    with pytest.raises(PolicyFormatError) as info:
        parse_policy(path)
    assert info.value.path == path
    assert info.value.line in (4, 5)  # the unclosed flow sequence opens on line 4
    assert str(info.value).startswith(f"{path}:{info.value.line}: ")


def test_missing_front_matter_key_names_the_key(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "nokey.md",
        "---\nid: x\ntitle: 제목\nlang: ko\neffective: 2026-01-01\n---\n\n## 1. 본문\n\n내용\n",
    )
    with pytest.raises(PolicyFormatError, match="'version'") as info:
        parse_policy(path)
    assert info.value.line == 6


def test_file_without_front_matter_is_rejected_at_line_1(tmp_path: Path) -> None:
    path = _write(tmp_path / "plain.md", "# 제목\n\n## 1. 본문\n\n내용\n")
    with pytest.raises(PolicyFormatError) as info:
        parse_policy(path)
    assert info.value.line == 1


def test_document_without_sections_is_rejected(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "flat.md",
        "---\nid: x\ntitle: t\nlang: ko\nversion: 1\neffective: 2026-01-01\n---\n\n본문만 있습니다.\n",
    )
    with pytest.raises(PolicyFormatError, match="no '##' sections"):
        parse_policy(path)


def test_duplicate_document_ids_are_rejected(tmp_path: Path) -> None:
    head = "---\nid: same\ntitle: t\nlang: ko\nversion: 1\neffective: 2026-01-01\n---\n\n## 1. a\n\n내용\n"
    _write(tmp_path / "a.md", head)
    _write(tmp_path / "b.md", head)
    with pytest.raises(PolicyFormatError, match=r"also used by a\.md"):
        load_policies(tmp_path)


def test_empty_or_missing_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeError, match="no policy documents"):
        load_policies(tmp_path)
    with pytest.raises(KnowledgeError, match="not found"):
        load_policies(tmp_path / "nope")


def test_long_section_is_split_by_paragraph_and_every_part_keeps_the_heading(tmp_path: Path) -> None:
    paragraphs = [f"{i}번째 문단입니다. " + " ".join(["가나다라마바사"] * 30) for i in range(6)]
    body = "\n\n".join(paragraphs)
    path = _write(
        tmp_path / "long.md",
        f"---\nid: long\ntitle: 긴 문서\nlang: ko\nversion: 1\neffective: 2026-01-01\n---\n\n## 3. 긴 절\n\n{body}\n\n## 4. 짧은 절\n\n짧다.\n",
    )
    chunks = chunk_document(parse_policy(path), max_chars=600)
    long_parts = [c for c in chunks if c.section == "3. 긴 절"]
    assert len(long_parts) >= 3
    assert all(len(c.text) <= 600 for c in long_parts)
    assert all(c.passage.startswith("긴 문서 § 3. 긴 절\n") for c in long_parts)
    assert "\n\n".join(c.text for c in long_parts) == body  # nothing lost or reordered
    assert [c.chunk_id for c in chunks][-1] == "long.md#2.1"


def test_every_shipped_chunk_fits_the_e5_window(e5: E5Embedder) -> None:
    for chunk in chunk_documents(load_policies(POLICIES)):
        assert e5.token_count(chunk.passage) <= 512, chunk.chunk_id


def test_korean_only_copy_has_no_english_summaries_and_still_parses(tmp_path: Path) -> None:
    copy = write_korean_only_copy(POLICIES, tmp_path / "ko")
    docs = load_policies(copy)
    assert len(docs) == len(load_policies(POLICIES))
    for doc in docs:
        for section in doc.sections:
            assert "EN:" not in section.body
    assert strip_english_summaries("가\n\n> EN: x\n\n나\n") == "가\n\n나\n"
