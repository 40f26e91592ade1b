"""What the model is given per hit (bot/knowledge/context.py): a hit carries its neighbouring section of
the same document when that neighbour scored close, never one that is already a hit, at most one each."""

from __future__ import annotations

from bot.knowledge.context import section_position, with_neighbours
from bot.knowledge.fusion import Candidate, Ranked
from bot.knowledge.hits import PolicyHit
from tests.support.knowledge import policy_ctx
from tools.base import ToolRegistry
from tools.policy_search import search_policy_tool


def ranked(*rows: tuple[str, float]) -> list[Ranked]:
    out = []
    for chunk_id, score in rows:
        source, _, position = chunk_id.partition("#")
        meta = {"source": source, "title": "보상 정책", "section": f"{position.split('.')[0]}. 조항"}
        out.append(Ranked(Candidate(chunk_id, meta, f"{chunk_id} 본문", 0.8, 0.0), score))
    return out


def test_chunk_ids_name_their_document_section_and_part() -> None:
    assert section_position("compensation.md#2.0") == ("compensation.md", 2, 0)
    assert section_position("a#b.md#10.3") == ("a#b.md", 10, 3)
    assert section_position("weird") is None


def test_a_hit_carries_its_close_neighbour_and_never_another_hit() -> None:
    got = with_neighbours(
        ranked(
            ("compensation.md#4.0", 2.0),  # the "neighbour first" ranking
            ("refunds.md#1.0", 1.6),
            ("compensation.md#5.0", 1.5),  # next to the first hit and close: goes along with it
            ("compensation.md#3.0", 1.4),  # also next to it, but only one neighbour per hit
            ("refunds.md#2.0", -3.0),  # next to the second hit, but far below it
            ("delivery.md#1.0", 0.1),
        ),
        top_k=3,
        margin=1.0,
    )
    assert [(h.source, h.section) for h in got] == [
        ("compensation.md", "4. 조항"),
        ("refunds.md", "1. 조항"),
        ("compensation.md", "5. 조항"),
    ]
    # compensation §5 is a hit itself, so §4 takes its other neighbour, §3; refunds §2 scored far below
    assert [h.neighbour_section for h in got] == ["3. 조항", "", ""]
    assert got[0].neighbour_text == "compensation.md#3.0 본문"
    assert got[0].neighbour_citation == "[보상 정책 §3 조항]"


def test_in_document_scope_a_hit_carries_the_best_other_section_of_its_document() -> None:
    rows = (
        ("sanctions.md#1.0", 4.2),  # ban steps ranked first; the appeal section, two sections on, fourth
        ("sanctions.md#6.0", 2.4),
        ("sanctions.md#2.0", 2.2),
        ("sanctions.md#4.0", 2.0),
        ("refunds.md#1.0", 1.9),
    )
    adjacent = with_neighbours(ranked(*rows), top_k=3, margin=5.0)
    assert "4. 조항" not in [h.neighbour_section for h in adjacent]  # §2, its neighbour, is a hit already
    got = with_neighbours(ranked(*rows), top_k=3, margin=5.0, scope="document")
    assert [(h.section, h.neighbour_section) for h in got] == [
        ("1. 조항", "4. 조항"),
        ("6. 조항", ""),
        ("2. 조항", ""),
    ]
    # never another document's section, and still within the margin
    far = with_neighbours(
        ranked(("a.md#1.0", 4.0), ("b.md#1.0", 3.9), ("a.md#7.0", -2.0)), 1, 5.0, scope="document"
    )
    assert [h.neighbour_section for h in far] == [""]


def test_without_a_margin_no_neighbour_is_given() -> None:
    got = with_neighbours(ranked(("a.md#1.0", 2.0), ("a.md#2.0", 1.99)), top_k=1, margin=float("-inf"))
    assert [h.neighbour_section for h in got] == [""]


async def test_the_search_tool_shows_the_neighbour_with_its_own_citation() -> None:
    hit = with_neighbours(ranked(("compensation.md#1.0", 2.0), ("compensation.md#2.0", 1.8)), 1, 1.0)[0]

    class Searcher:
        async def search(self, query: str, top_k: int = 3) -> list:
            return [hit]

    result = await ToolRegistry([search_policy_tool]).execute(
        "search_policy", {"query": "쿠폰 한도"}, policy_ctx(Searcher())
    )
    assert "1. [보상 정책 §1 조항] compensation.md#1.0 본문" in result.message
    assert "   + [보상 정책 §2 조항] compensation.md#2.0 본문" in result.message
    assert result.data["hits"][0]["neighbour_section"] == "2. 조항"


def test_a_same_document_neighbour_must_rank_within_the_limit() -> None:
    rows = (("a.md#1.0", 4.0), ("b.md#1.0", 3.9), ("c.md#1.0", 3.8), ("d.md#1.0", 3.7), ("a.md#2.0", 3.6))
    assert [h.neighbour_section for h in with_neighbours(ranked(*rows), 1, 5.0, scope="document")] == [
        "2. 조항"
    ]
    limited = with_neighbours(ranked(*rows), 1, 5.0, scope="document", within=4)
    assert [h.neighbour_section for h in limited] == [""]  # a.md §2 ranks fifth


def test_a_hit_without_a_neighbour_gives_its_place_to_the_best_section_not_yet_shown() -> None:
    rows = (
        ("a.md#1.0", 4.0),
        ("b.md#1.0", 3.9),
        ("a.md#2.0", 3.8),  # a.md's neighbour
        ("c.md#3.0", 3.7),  # b.md has no other section: the best one not shown goes along with it
        ("d.md#1.0", 3.6),
        ("e.md#1.0", -9.0),
    )
    got = with_neighbours(ranked(*rows), 2, 5.0, scope="document", within=10, fill=True)
    assert [(h.source, h.section, h.neighbour_source, h.neighbour_section) for h in got] == [
        ("a.md", "1. 조항", "a.md", "2. 조항"),
        ("b.md", "1. 조항", "c.md", "3. 조항"),
    ]
    assert got[1].neighbour_text == "c.md#3.0 본문"
    # and never one beyond the margin
    far = with_neighbours(ranked(("b.md#1.0", 4.0), ("e.md#1.0", -9.0)), 1, 5.0, scope="document", fill=True)
    assert [h.neighbour_section for h in far] == [""]


def test_a_neighbour_of_another_document_is_cited_with_that_documents_title() -> None:
    hit = PolicyHit("refunds.md", "refunds", "환불 정책", "1. 청약 철회 기간", 2.0, "본문", "ko")
    other = PolicyHit("delivery.md", "delivery", "배송 정책", "4. 배송지 변경", 1.9, "다른 본문", "ko")
    same = PolicyHit("refunds.md", "refunds", "환불 정책", "2. 환불 불가", 1.9, "또 다른 본문", "ko")
    assert hit.with_neighbour(other).neighbour_citation == "[배송 정책 §4 배송지 변경]"
    assert hit.with_neighbour(same).neighbour_citation == "[환불 정책 §2 환불 불가]"
    assert hit.with_neighbour(other).citation == "[환불 정책 §1 청약 철회 기간]"
