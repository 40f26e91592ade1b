"""The `feedback` table: the 👍 / 👎 tally of a window, and its writes: a player's 👍 / 👎 on an answer stored or changed in one transaction,
with the run's tools and result codes, and — for a 👎 with a comment on an answer that searched the
policies — the policy gap it reveals (`policy_gaps`). The rules of who may vote live in the same
transaction because they read the run being voted on."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.exc import IntegrityError

from bot.store.database import Store
from bot.store.models import Feedback, Run, RunToolCall, ThreadMessage
from bot.store.policy_gaps import GapRecord, PolicyGap
from bot.store.units import is_unique_violation


class FeedbackError(ValueError):
    """The vote cannot be stored (unknown answer, someone else's answer, bad value)."""


@dataclass(frozen=True)
class VoteResult:
    run_id: str
    vote: int
    changed: bool
    """False when the same vote was already stored (a repeated press)."""
    comment: str | None


async def store_vote(
    store: Store,
    *,
    run_id: str,
    player: str,
    vote: int,
    comment: str | None,
    thread_id: str | None,
    now: datetime,
    gap_tool: str,
) -> VoteResult:
    """Store or change `player`'s vote on `run_id`; a 👎 with a comment on a run that called `gap_tool`
    keeps a policy gap. `FeedbackError` when the run is unknown, in another thread or not the player's."""
    for _attempt in range(2):  # a racing first vote of the same player hits the unique key once
        try:
            return await _upsert(store, run_id, player, vote, comment, thread_id, now, gap_tool)
        except IntegrityError as exc:
            if not is_unique_violation(exc):
                raise
            continue
    raise FeedbackError("the vote could not be stored, try again")


async def _upsert(
    store: Store,
    run_id: str,
    player: str,
    vote: int,
    comment: str | None,
    thread_id: str | None,
    now: datetime,
    gap_tool: str,
) -> VoteResult:
    async with store.session() as s, s.begin():
        run = await s.get(Run, run_id)
        if run is None:
            raise FeedbackError(f"no answer {run_id}")
        if thread_id is not None and run.thread_id != thread_id:
            raise FeedbackError(f"answer {run_id} is not in {thread_id}")
        if run.player != player:
            raise FeedbackError("only the player the answer was for can rate it")
        row = (
            await s.execute(select(Feedback).where(Feedback.run_id == run_id, Feedback.player == player))
        ).scalar_one_or_none()
        if row is None:
            calls = (
                await s.execute(
                    select(RunToolCall.tool, RunToolCall.code)
                    .where(RunToolCall.run_id == run_id)
                    .order_by(RunToolCall.id)
                )
            ).all()
            if vote == -1 and comment and gap_tool in [t for t, _ in calls]:
                await _keep_gap(s, run, player, comment, now)
            s.add(
                Feedback(
                    run_id=run_id,
                    thread_id=run.thread_id,
                    player=player,
                    vote=vote,
                    comment=comment,
                    tools=[t for t, _ in calls],
                    codes=[c for _, c in calls],
                    created_at=now,
                    updated_at=now,
                )
            )
            return VoteResult(run_id, vote, True, comment)
        changed = row.vote != vote
        if vote == -1 and comment and comment != row.comment and gap_tool in (row.tools or []):
            await _keep_gap(s, run, player, comment, now)
        if changed or comment is not None:
            row.comment = comment
        row.vote = vote
        row.updated_at = now
        return VoteResult(run_id, vote, changed, row.comment)


async def _keep_gap(s: Any, run: Run, player: str, comment: str, now: datetime) -> None:
    """A 👎 with a comment on an answer that searched the policies is a policy gap: kept with the
    player's question (their last message before the answer) and the comment."""
    question = (
        await s.execute(
            select(ThreadMessage.content)
            .where(
                ThreadMessage.thread_id == run.thread_id,
                ThreadMessage.role == "user",
                ThreadMessage.created_at <= run.answered_at,
            )
            .order_by(ThreadMessage.id.desc())
            .limit(1)
        )
    ).scalar_one_or_none()
    gap = GapRecord("disliked", str(question or comment), run.thread_id, now, run.run_id, player, comment)
    s.add(PolicyGap(**gap.row()))


async def vote_tally(store: Store, *, since: datetime, until: datetime) -> tuple[int, int]:
    """(👍, 👎) of the votes last changed from `since` to `until` (both included)."""
    async with store.session() as s:
        up, down = (
            await s.execute(
                select(
                    func.coalesce(func.sum(case((Feedback.vote == 1, 1), else_=0)), 0),
                    func.coalesce(func.sum(case((Feedback.vote == -1, 1), else_=0)), 0),
                ).where(Feedback.updated_at >= since, Feedback.updated_at <= until)
            )
        ).one()
    return int(up), int(down)
