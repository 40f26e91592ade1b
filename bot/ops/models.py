"""The `ops_drafts` table lives with every other table in `bot.store.models`; re-exported here."""

from __future__ import annotations

from bot.store.models import OPS_DRAFT_STATUSES, OpsDraft

__all__ = ["OPS_DRAFT_STATUSES", "OpsDraft"]
