"""The `ops_drafts` table's reads and writes: a finished `/ops draft` run stored, and read back by id or
as the latest one (`bot.ops.drafts` builds the rows)."""

from __future__ import annotations

from sqlalchemy import select

from bot.store.database import Store
from bot.store.models import OpsDraft


async def add_draft(store: Store, row: OpsDraft) -> OpsDraft:
    """Store `row`; it comes back with its id."""
    async with store.session() as s:
        s.add(row)
        await s.commit()
    return row


async def draft_by_id(store: Store, draft_id: int | None = None) -> OpsDraft | None:
    """The draft with `draft_id`, or the latest one when it is None."""
    async with store.session() as s:
        if draft_id is not None:
            return await s.get(OpsDraft, draft_id)
        query = select(OpsDraft).order_by(OpsDraft.id.desc()).limit(1)
        return (await s.execute(query)).scalar_one_or_none()
