"""The fact check's Korean surface topic test (`bot.guards.paraphrase.surface_topic`): a sentence that
clearly restates a passage is judged without Kiwi, one that looks unrelated is still analysed, and over
every answer of both sets the decisions are the ones Kiwi alone gives."""

from __future__ import annotations

import pytest

from bot.guards import paraphrase
from bot.guards.evidence import text_passages

REFUND = text_passages(
    [
        "캐시샵 아이템은 구매 후 7일 이내이고 사용하지 않은 경우 전액 환불받을 수 있습니다.",
        "불량품이나 잘못 배송된 상품은 배송비 없이 교환 또는 환불되며, 받은 날로부터 3개월 이내(불량을 안 날로부터 30일 이내) 신청할 수 있습니다.",
    ]
)
COUPONS = text_passages(["발급된 쿠폰에는 고유 코드가 있으며 발급일로부터 30일 동안 사용할 수 있습니다."])


@pytest.fixture
def analyses(monkeypatch):
    """The answer sentences Kiwi analyses (the passages' words are worked out first, as run after run)."""
    for p in [*REFUND, *COUPONS]:
        paraphrase.passage_words(p.sentence)
    paraphrase.content_words.cache_clear()
    seen: list[str] = []
    real = paraphrase.analyze

    def counted(text: str) -> list[str]:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(paraphrase, "analyze", counted)
    return seen


def test_the_surface_shows_the_passage_words_a_sentence_writes() -> None:
    vocabulary = paraphrase.passage_words(REFUND[0].sentence)
    found, others = paraphrase.surface_topic(
        "- 캐시샵 아이템은 **구매 후 7일 이내**에만 환불돼요.", vocabulary
    )
    assert {"구매", "이내", "환불", "아이템"} <= found
    assert others <= 1


def test_a_sentence_that_clearly_restates_the_passage_is_not_analysed(analyses) -> None:
    body = "캐시샵 아이템은 구매 후 7일 이내, 사용하지 않았다면 전액 환불됩니다."
    assert not paraphrase.unrelated(body, [REFUND[0]])
    assert analyses == []


def test_a_sentence_that_looks_unrelated_is_still_analysed(analyses) -> None:
    """A "30일" backed only by the coupons' sentence: the surface shares too little, so Kiwi decides (and
    finds it about something else, as before)."""
    body = "사용하지 않은 캐시샵 아이템은 구매 후 30일 이내에 환불받을 수 있습니다."
    assert paraphrase.unrelated(body, COUPONS)
    assert analyses == [body]


def test_without_the_surface_test_every_sentence_is_analysed(analyses, monkeypatch) -> None:
    monkeypatch.setattr(paraphrase, "SURFACE_TOPIC", False)
    body = "캐시샵 아이템은 구매 후 7일 이내, 사용하지 않았다면 전액 환불됩니다."
    assert not paraphrase.unrelated(body, [REFUND[0]])
    assert analyses == [body]


async def test_every_answer_of_both_sets_is_decided_as_kiwi_alone_decides_it(monkeypatch) -> None:
    """The differential run (`python -m bench.fact_check_diff`): each answer, its false twin and every
    grounding answer, enforcing and observing, give the same text and decisions both ways."""
    from bench.fact_check_diff import _set_runs

    monkeypatch.setattr(paraphrase, "SURFACE_TOPIC", True)  # restored whatever the runs leave it at
    kiwi_only, _ = await _set_runs(surface=False)
    surface, _ = await _set_runs(surface=True)
    assert len(surface) >= 220
    assert [r for r, k in zip(surface, kiwi_only, strict=True) if r != k] == []
