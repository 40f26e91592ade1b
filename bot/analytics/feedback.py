"""Answer feedback: 👍 / 👎 on a delivered answer, one vote per answer per player, changeable.

The vote is stored with the run's thread, tools and result codes (read from `run_tool_calls`), so a
rating can be traced to what the bot did. Discord buttons and the web widget both write through here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from bot.store import Feedback, PolicyGap, Run, RunToolCall, Store, ThreadMessage, utcnow
from bot.store.policy_gaps import GapRecord

POLICY_TOOL = "search_policy"

MAX_COMMENT_CHARS = 500


class FeedbackError(ValueError):
    """The vote cannot be stored (unknown answer, someone else's answer, bad value)."""


@dataclass(frozen=True)
class VoteResult:
    run_id: str
    vote: int
    changed: bool
    """False when the same vote was already stored (a repeated press)."""
    comment: str | None


async def record_vote(
    store: Store,
    *,
    run_id: str,
    player: str,
    vote: int,
    comment: str | None = None,
    thread_id: str | None = None,
    now: datetime | None = None,
) -> VoteResult:
    """Store or change `player`'s vote on the answer of `run_id`.

    Only the player the answer was for may rate it (`FeedbackError` otherwise). A comment replaces the
    stored one when given; a vote without a comment keeps the earlier comment only if the vote is unchanged.
    """
    if vote not in (1, -1):
        raise FeedbackError(f"vote must be 1 or -1, got {vote!r}")
    text = (comment or "").strip()[:MAX_COMMENT_CHARS] or None
    for _attempt in range(2):  # a racing first vote of the same player hits the unique key once
        try:
            return await _upsert(store, run_id, player, vote, text, thread_id, now or utcnow())
        except IntegrityError:
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
            if vote == -1 and comment and POLICY_TOOL in [t for t, _ in calls]:
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
        if vote == -1 and comment and comment != row.comment and POLICY_TOOL in (row.tools or []):
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
