"""Saving and reading `/ops draft` results in the `ops_drafts` table."""

from __future__ import annotations

from bot.ops.state import OpsState
from bot.store import Store, ops_drafts
from bot.store.models import OpsDraft


async def save_draft(
    store: Store, state: OpsState, *, created_by: str, thread_id: str | None, progress: list[str]
) -> OpsDraft:
    """Store a finished run (accepted, capped or failed) and return the row with its id."""
    row = OpsDraft(
        request=state.request,
        plan=state.plan,
        draft=state.draft,
        status=state.status,
        reflection_count=state.reflection_count,
        failed_step=state.failed_step,
        error=state.error,
        missing=list(state.missing),
        progress=list(progress),
        thread_id=thread_id,
        created_by=created_by,
    )
    return await ops_drafts.add_draft(store, row)


async def load_draft(store: Store, draft_id: int | None = None) -> OpsDraft | None:
    """The draft with `draft_id`, or the latest one when it is None."""
    return await ops_drafts.draft_by_id(store, draft_id)
