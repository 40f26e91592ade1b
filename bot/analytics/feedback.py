"""Answer feedback: 👍 / 👎 on a delivered answer, one vote per answer per player, changeable.

The vote is stored with the run's thread, tools and result codes (read from `run_tool_calls`), so a
rating can be traced to what the bot did. Discord buttons and the web widget both write through here.
"""

from __future__ import annotations

from datetime import datetime

from bot.store import Store, utcnow
from bot.store.feedback_votes import FeedbackError, VoteResult, store_vote

__all__ = ["MAX_COMMENT_CHARS", "FeedbackError", "VoteResult", "record_vote"]

POLICY_TOOL = "search_policy"

MAX_COMMENT_CHARS = 500


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
    return await store_vote(
        store,
        run_id=run_id,
        player=player,
        vote=vote,
        comment=text,
        thread_id=thread_id,
        now=now or utcnow(),
        gap_tool=POLICY_TOOL,
    )
