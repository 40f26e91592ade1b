"""`store.incidents.deliveries`: which conversations were told what an incident's compensation gave them
(once per conversation, by a unique key, queued through the staff outbox), who asked about an incident,
and the coupons it gave a player."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from bot.store.coupons import LIVE_STATUSES
from bot.store.incident_tables import IncidentDelivery, IncidentNoticeAnswer
from bot.store.models import Coupon, Run, RunToolCall, StaffOutbox, utcnow
from bot.store.units import UnitRunner, is_unique_violation

SENDER = "운영팀 / Arca team"
"""Who the player sees the compensation message from (the outbox's `staff` column)."""


@dataclass(frozen=True)
class Asker:
    """A conversation that asked about an incident: its thread, its player and its language."""

    thread_id: str
    player_id: str
    locale: str


@dataclass(frozen=True)
class GrantedCoupon:
    """One coupon an incident's compensation gave a player."""

    order_id: str | None
    amount: int
    code: str
    expires_at: datetime | None


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
        except IntegrityError as exc:
            if not is_unique_violation(exc):
                raise
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

    async def granted(self, incident_id: int, player_id: str) -> list[GrantedCoupon]:
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
                GrantedCoupon(r.order_id, r.amount, r.code, r.expires_at)
                for r in (await s.execute(query)).all()
            ]
