"""The policy passages are read at start-up (`warm_policy_passages`), not on the players' first questions:
a search hit's evidence then extracts no sentence again."""

from __future__ import annotations

from bot.guards import dates, evidence, facts
from tools.base import ResultCode, ToolResult
from tools.policy_search import _hit_data


async def test_a_search_hit_of_a_warmed_policy_extracts_no_sentence_again(policy_index) -> None:
    sections = policy_index.sections()
    assert len(sections) > 50 and all(s.citation.startswith("[") and s.text for s in sections)
    for cache in (evidence._hit_passages, facts._extract, dates._calendar_facts):
        cache.cache_clear()
    warmed = evidence.warm_policy_passages((s.citation, s.text) for s in sections)
    assert warmed > 100  # the shipped policies state facts in well over a hundred sentences

    hits = await policy_index.search("쿠폰은 하루에 몇 장까지 받을 수 있나요?", top_k=3)
    data = {"hits": [_hit_data(h) for h in hits]}
    # the tool's message (here "") is new text each run: the calendar reads it whole once, its pieces'
    # facts from `_extract`'s cache
    missed = [c.cache_info().misses for c in (evidence._hit_passages, facts._extract)]
    ev = evidence.build_evidence(
        outcomes=[("search_policy", ToolResult(ok=True, code=ResultCode.OK, message="", data=data))]
    )
    assert ev.passages  # the hits state facts, and the evidence has them as passages
    after = [c.cache_info().misses for c in (evidence._hit_passages, facts._extract)]
    assert after == missed


async def test_without_the_start_up_read_the_same_hit_is_read_on_the_question() -> None:
    """The other side of the test above: a section never warmed is extracted when a run first uses it."""
    evidence._hit_passages.cache_clear()
    text = "보상 쿠폰은 한 계정당 하루 최대 2장까지 발급됩니다. 금액은 최대 5,000원입니다."
    data = {"hits": [{"citation": "[보상 정책 §2 발급 한도]", "text": text}]}
    before = evidence._hit_passages.cache_info().misses
    evidence.build_evidence(
        outcomes=[("search_policy", ToolResult(ok=True, code=ResultCode.OK, message="", data=data))]
    )
    assert evidence._hit_passages.cache_info().misses == before + 1
    evidence.warm_policy_passages([("[보상 정책 §2 발급 한도]", text)])
    assert evidence._hit_passages.cache_info().misses == before + 1  # already read: the same key
