"""Policy gaps: the questions the bot could not answer from the policies (issue 24), each kept with its
conversation so the support team can write the missing rule.

Three events make a gap: a `search_policy` call that found nothing (`abstained`), an escalation in a run
whose policy search found nothing (`escalated`), and a 👎 with a comment on an answer that searched the
policies (`disliked`). The table arrives with schema version 5 (`models.UPGRADABLE_FROM`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Index, Integer, String, Text, func, select
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.models import Base, UTCDateTime, utcnow

GAP_KINDS = ("abstained", "escalated", "disliked")
MAX_QUESTION_CHARS = 500


class PolicyGap(Base):
    """One question no policy answered, with where it was asked."""

    __tablename__ = "policy_gaps"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16))
    """One of `GAP_KINDS`."""
    question: Mapped[str] = mapped_column(Text)
    """The search query, or the player's message the disliked answer replied to."""
    detail: Mapped[str | None] = mapped_column(Text, nullable=True)
    """The escalation summary or the 👎 comment."""
    thread_id: Mapped[str] = mapped_column(String(100))
    run_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    player: Mapped[str | None] = mapped_column(String(100), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    __table_args__ = (Index("ix_policy_gaps_created_at", "created_at"),)


@dataclass(frozen=True)
class GapRecord:
    """A policy gap as the store's callers see it."""

    kind: str
    question: str
    thread_id: str
    at: datetime
    run_id: str | None = None
    player: str | None = None
    detail: str | None = None

    def row(self) -> dict[str, Any]:
        if self.kind not in GAP_KINDS:
            raise ValueError(f"unknown policy gap kind {self.kind!r}")
        return {
            "kind": self.kind,
            "question": " ".join(self.question.split())[:MAX_QUESTION_CHARS],
            "detail": self.detail,
            "thread_id": self.thread_id,
            "run_id": self.run_id,
            "player": self.player,
            "created_at": self.at,
        }


async def add_policy_gaps(store: Any, gaps: Sequence[GapRecord]) -> None:
    """Keep `gaps` (one transaction)."""
    rows = [g.row() for g in gaps if g.question.strip()]
    await store.insert_rows([(PolicyGap.__table__, rows)])


async def policy_gaps(store: Any, *, since: datetime | None = None, limit: int = 5000) -> list[GapRecord]:
    """The gaps since `since` (all when None), newest first, at most `limit`."""
    query = select(PolicyGap).order_by(PolicyGap.created_at.desc(), PolicyGap.id.desc()).limit(limit)
    if since is not None:
        query = query.where(PolicyGap.created_at >= since)
    async with store.session() as s:
        found = (await s.execute(query)).scalars().all()
    return [
        GapRecord(g.kind, g.question, g.thread_id, g.created_at, g.run_id, g.player, g.detail) for g in found
    ]


async def count_policy_gaps(store: Any, *, since: datetime | None = None) -> int:
    """How many gaps were kept since `since` (all when None)."""
    query = select(func.count(PolicyGap.id))
    if since is not None:
        query = query.where(PolicyGap.created_at >= since)
    async with store.session() as s:
        return int((await s.execute(query)).scalar_one())
