"""The staff's "questions without a policy" list: policy gaps (bot/store/policy_gaps.py) grouped by
similar question with the policy index's own embedder, so twenty wordings of one missing rule are one
line with a count.

Grouping is greedy and order-stable: the most asked question opens a group, and each other question
joins the group whose first question it is closest to when that similarity reaches `SIMILAR`. With
e5-small, paraphrases of one question (Korean or English) score 0.88–0.96 and different questions of the
same game 0.76–0.84, hence 0.87.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from bot.knowledge.embedders import Embedder, embed_queries
from bot.store.policy_gaps import GapRecord

SIMILAR = 0.87


@dataclass
class GapGroup:
    """Policy gaps about one missing rule."""

    question: str
    """The most asked wording."""
    gaps: list[GapRecord] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.gaps)

    @property
    def last_at(self) -> datetime:
        return max(g.at for g in self.gaps)

    @property
    def wordings(self) -> list[str]:
        """Every distinct wording, the most asked first."""
        return [q for q, _ in Counter(" ".join(g.question.split()) for g in self.gaps).most_common()]

    @property
    def threads(self) -> list[str]:
        """The conversations, most recent first, each once."""
        return list(dict.fromkeys(g.thread_id for g in sorted(self.gaps, key=lambda g: g.at, reverse=True)))

    @property
    def kinds(self) -> dict[str, int]:
        return dict(Counter(g.kind for g in self.gaps))


def group_gaps(
    gaps: Sequence[GapRecord], embedder: Embedder | None, similar: float = SIMILAR
) -> list[GapGroup]:
    """`gaps` grouped by similar question, the biggest group first (then the most recent); without an
    embedder, by identical wording (case and spacing aside)."""
    counts = Counter(" ".join(g.question.split()).casefold() for g in gaps)
    wordings = sorted(counts, key=lambda q: -counts[q])
    if embedder is not None and wordings:
        vectors = np.asarray(embed_queries(embedder, wordings), dtype=np.float32)
    else:
        vectors = np.eye(len(wordings), dtype=np.float32)
    heads: list[int] = []
    group_of: dict[str, int] = {}
    for i, wording in enumerate(wordings):
        similarities = [float(vectors[i] @ vectors[h]) for h in heads]
        best = int(np.argmax(similarities)) if similarities else -1
        if best >= 0 and similarities[best] >= similar:
            group_of[wording] = best
        else:
            group_of[wording] = len(heads)
            heads.append(i)
    groups = [GapGroup(question="") for _ in heads]
    for gap in gaps:
        groups[group_of[" ".join(gap.question.split()).casefold()]].gaps.append(gap)
    for group in groups:
        group.question = group.wordings[0]
    return sorted(groups, key=lambda g: (-g.count, -g.last_at.timestamp()))
