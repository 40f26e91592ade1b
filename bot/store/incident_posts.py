"""`store.incidents.posts`: where an incident's notice was posted in Discord (claimed once per channel by
a unique key, edited when the notice changes)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from bot.store.incident_tables import IncidentPost
from bot.store.models import utcnow
from bot.store.units import UnitRunner, is_unique_violation

STALE_CLAIM = timedelta(minutes=1)
"""A claimed post still without a message after this (its process died mid-send) is claimed again."""


@dataclass(frozen=True)
class PostRecord:
    id: int
    incident_id: int
    channel_id: str
    message_id: str | None
    revision: str
    updated_at: datetime


class IncidentPosts:
    def __init__(self, store: UnitRunner) -> None:
        self._store = store

    async def of(self, incident_id: int, channel_id: str) -> PostRecord | None:
        query = select(IncidentPost).where(
            IncidentPost.incident_id == incident_id, IncidentPost.channel_id == channel_id
        )
        async with self._store.session() as s:
            row = (await s.execute(query)).scalar_one_or_none()
        if row is None:
            return None
        return PostRecord(
            row.id, row.incident_id, row.channel_id, row.message_id, row.revision, row.updated_at
        )

    async def incident_ids(self) -> set[int]:
        """Incidents with a post somewhere (a closed one's post still needs its last edit)."""
        async with self._store.session() as s:
            return set((await s.execute(select(IncidentPost.incident_id).distinct())).scalars())

    async def claim_new(self, incident_id: int, channel_id: str, revision: str) -> PostRecord | None:
        """Claim the first post of `incident_id` in `channel_id` (None: another process holds it)."""
        now = utcnow()
        try:
            async with self._store.session() as s, s.begin():
                await s.execute(
                    insert(IncidentPost).values(
                        incident_id=incident_id, channel_id=channel_id, revision=revision, updated_at=now
                    )
                )
        except IntegrityError as exc:
            if not is_unique_violation(exc):
                raise
            return None
        return await self.of(incident_id, channel_id)

    async def claim_change(self, post: PostRecord, revision: str, *, now: datetime | None = None) -> bool:
        """Take the post over to show `revision`: only if nobody changed it meanwhile (a conditional
        UPDATE). A post still without a message is taken over only once its claim went stale."""
        now = now or utcnow()
        query = update(IncidentPost).where(IncidentPost.id == post.id, IncidentPost.revision == post.revision)
        if post.message_id is None:
            if now - post.updated_at < STALE_CLAIM:
                return False
            query = query.where(IncidentPost.message_id.is_(None), IncidentPost.updated_at == post.updated_at)
        async with self._store.session() as s, s.begin():
            result = await s.execute(query.values(revision=revision, updated_at=now))
        return bool(result.rowcount)

    async def posted(self, post_id: int, message_id: str) -> None:
        async with self._store.session() as s, s.begin():
            await s.execute(
                update(IncidentPost).where(IncidentPost.id == post_id).values(message_id=message_id)
            )
