"""Grouping the policy gaps by similar question with the index's real embedder (e5): wordings of one
missing rule, in Korean or English, are one group; other questions are not pulled in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.knowledge.embedders import E5Embedder
from bot.knowledge.gap_groups import group_gaps
from bot.store.policy_gaps import GapRecord

NOW = datetime(2026, 3, 2, tzinfo=UTC)


def gap(question: str, thread: str, hours_ago: int, kind: str = "abstained") -> GapRecord:
    return GapRecord(kind, question, thread, NOW - timedelta(hours=hours_ago))


def test_paraphrases_group_together_and_the_biggest_group_comes_first(e5: E5Embedder) -> None:
    gaps = [
        gap("펫 이름 바꾸는 비용", "discord:1", 30),
        gap("펫 이름 변경하려면 얼마예요?", "discord:2", 3),
        gap("how much to rename my pet", "web:u1:main", 1, "escalated"),
        gap("길드 창고 아이템 복구 되나요?", "discord:3", 10),
        gap("길드 창고에서 사라진 아이템 돌려주나요", "discord:3", 2, "disliked"),
        gap("하우징 가구 환불 되나요", "discord:4", 5),
    ]
    groups = group_gaps(gaps, e5)
    assert [sorted(g.wordings) for g in groups] == [
        sorted(["펫 이름 바꾸는 비용", "펫 이름 변경하려면 얼마예요?", "how much to rename my pet"]),
        sorted(["길드 창고 아이템 복구 되나요?", "길드 창고에서 사라진 아이템 돌려주나요"]),
        ["하우징 가구 환불 되나요"],
    ]
    pets, guild, _ = groups
    assert pets.count == 3 and pets.last_at == NOW - timedelta(hours=1)
    assert pets.threads == ["web:u1:main", "discord:2", "discord:1"]
    assert guild.threads == ["discord:3"] and guild.kinds == {"abstained": 1, "disliked": 1}


def test_without_an_embedder_only_identical_wordings_group() -> None:
    groups = group_gaps([gap("펫  이름", "a", 1), gap("펫 이름", "b", 2), gap("펫 이름 변경", "c", 3)], None)
    assert [(g.question, g.count) for g in groups] == [("펫 이름", 2), ("펫 이름 변경", 1)]
