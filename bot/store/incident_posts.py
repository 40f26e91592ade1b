"""`store.incidents.posts` and `store.incidents.deliveries`: where an incident's notice was posted in
Discord (claimed once per channel by a unique key, edited when the notice changes), and which
conversations were told what its compensation gave them (once per conversation, by a unique key)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from bot.store.coupons import LIVE_STATUSES
from bot.store.incident_tables import IncidentDelivery, IncidentNoticeAnswer, IncidentPost
from bot.store.models import Coupon, Run, RunToolCall, StaffOutbox, utcnow
from bot.store.units import UnitRunner

SENDER = "운영팀 / Arca team"
"""Who the player sees the compensation message from (the outbox's `staff` column)."""
STALE_CLAIM = timedelta(minutes=1)
"""A claimed post still without a message after this (its process died mid-send) is claimed again."""


@dataclass(frozen=True)
class Asker:
    """A conversation that asked about an incident: its thread, its player and its language."""

    thread_id: str
    player_id: str
    locale: str


@dataclass(frozen=True)
class Granted:
    """One coupon an incident's compensation gave a player."""

    order_id: str | None
    amount: int
    code: str
    expires_at: datetime | None


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
        except IntegrityError:
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


class IncidentDeliveries:
    def __init__(self, store: UnitRunner) -> None:
        self._store = store

    async def tell(self, incident_id: int, thread_id: str, player_id: str | None, text: str) -> bool:
        """Queue `text` for the conversation through the staff outbox, once per (incident, thread): the
        delivery row and the outbox row commit together, so a second process or a restart adds neither."""
        now = utcnow()
        try:
            async with self._store.session() as s, s.begin():
                out = await s.execute(
                    insert(StaffOutbox.__table__).values(
                        thread_id=thread_id, staff=SENDER, text=text, created_at=now
                    )
                )
                await s.execute(
                    insert(IncidentDelivery).values(
                        incident_id=incident_id,
                        thread_id=thread_id,
                        player_id=player_id,
                        outbox_id=int(out.inserted_primary_key[0]),
                        created_at=now,
                    )
                )
        except IntegrityError:
            return False
        return True

    async def told(self, incident_id: int) -> set[str]:
        query = select(IncidentDelivery.thread_id).where(IncidentDelivery.incident_id == incident_id)
        async with self._store.session() as s:
            return set((await s.execute(query)).scalars())

    async def askers(
        self, incident_id: int, tool: str, since: datetime, until: datetime | None
    ) -> list[Asker]:
        """Linked players' conversations that asked about the incident, each once, in the language of its
        latest such run: a run between `since` and `until` that called `tool` (the incident's status), or
        one whose answer relayed the incident's notice (`incident_notice_answers`)."""
        linked = Run.player.startswith("player:")
        called = (
            select(Run.thread_id, Run.player, Run.locale, Run.started_at)
            .join(RunToolCall, RunToolCall.run_id == Run.run_id)
            .where(RunToolCall.tool == tool, Run.started_at >= since, linked)
        )
        if until is not None:
            called = called.where(Run.started_at <= until)
        relayed = (
            select(Run.thread_id, Run.player, Run.locale, Run.started_at)
            .join(IncidentNoticeAnswer, IncidentNoticeAnswer.run_id == Run.run_id)
            .where(IncidentNoticeAnswer.incident_id == incident_id, linked)
        )
        async with self._store.session() as s:
            rows = [*(await s.execute(called)).all(), *(await s.execute(relayed)).all()]
        rows.sort(key=lambda r: r.started_at)
        latest = {(r.thread_id, r.player): r.locale for r in rows}
        return [Asker(t, p.removeprefix("player:"), loc or "ko") for (t, p), loc in latest.items()]

    async def granted(self, incident_id: int, player_id: str) -> list[Granted]:
        query = (
            select(Coupon.order_id, Coupon.amount, Coupon.code, Coupon.expires_at)
            .where(
                Coupon.idempotency_key.like(f"incident:{incident_id}:%"),
                Coupon.player_id == player_id,
                Coupon.status.in_(LIVE_STATUSES),
            )
            .order_by(Coupon.order_id)
        )
        async with self._store.session() as s:
            return [
                Granted(r.order_id, r.amount, r.code, r.expires_at) for r in (await s.execute(query)).all()
            ]
