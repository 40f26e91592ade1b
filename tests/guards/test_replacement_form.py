"""The form of a replacement (issue 50): a withheld sentence inside a Markdown list becomes a list item of
its own (never prose mid-list), no sentence is said twice, and two withheld sentences get one honest line
that covers both, each recorded — nothing is dropped silently."""

from __future__ import annotations

import re

import pytest

from bot.guards.fact_check import TO_CONFIRM
from tests.guards.fact_set import load

ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+")
LISTED = [c for c in load("precision") if c.false and any(ITEM.match(line) for line in c.false.splitlines())]


def _list_lines(text: str) -> list[tuple[int, bool]]:
    """(line number, is a list item) of every non-blank line."""
    return [(i, bool(ITEM.match(line))) for i, line in enumerate(text.splitlines()) if line.strip()]


@pytest.mark.parametrize("case", LISTED, ids=lambda c: c.id)
async def test_a_withheld_list_item_stays_a_list_item(case) -> None:
    verdict = await case.check(case.false)
    assert verdict.facts or verdict.replaced
    before, after = case.false.splitlines(), verdict.text.splitlines()
    assert len(after) <= len(before)
    for old, new in zip(before, after, strict=False):
        if ITEM.match(old):
            assert ITEM.match(new) and ITEM.match(new).group(0) == ITEM.match(old).group(0), (old, new)
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n", verdict.text) if s.strip()]
    assert len(sentences) == len(set(sentences)), verdict.text  # no sentence said twice


async def test_two_withheld_sentences_get_one_honest_line_and_both_are_recorded() -> None:
    case = next(c for c in load("precision") if c.id == "echo-order-id-ko")
    wrong = "이벤트 일정이에요:\n\n- 1부는 3월 20일에 끝나요.\n- 2부는 3월 27일에 끝나요.\n- 자세한 건 공지를 봐 주세요.\n"
    verdict = await case.check(wrong)
    assert verdict.text.count(TO_CONFIRM("ko")) == 1, verdict.text
    assert "20일" not in verdict.text and "27일" not in verdict.text
    assert [f["fact"] for f in verdict.facts] == ["3월 20일", "3월 27일"]
    assert verdict.facts[1]["replacement"] is None and verdict.facts[1]["covered_by"] == TO_CONFIRM("ko")
    lines = [line for line in verdict.text.splitlines() if line.strip()]
    assert lines[1] == "- " + TO_CONFIRM("ko") and lines[2] == "- 자세한 건 공지를 봐 주세요.", lines


async def test_a_replaced_coupon_claim_in_a_list_stays_a_list_item() -> None:
    case = next(c for c in load("precision") if c.id == "echo-order-id-list-ko")
    wrong = "처리 결과예요:\n\n- ORD101에 5,000원 쿠폰을 발급했습니다.\n- 다른 문의가 있으면 말씀해 주세요.\n"
    verdict = await case.check(wrong)
    assert verdict.replaced
    lines = [line for line in verdict.text.splitlines() if line.strip()]
    assert lines[1].startswith("- 쿠폰은 발급되지 않았습니다") and lines[2].startswith("- 다른 문의"), lines


async def test_every_decision_names_its_rule() -> None:
    for case in load("precision"):
        verdict = await case.check(case.false)
        for detail in verdict.facts:
            assert detail["rule"].startswith("fact."), (case.id, detail)
