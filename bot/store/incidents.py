"""`store.incidents`: incidents stored, changed (each change audited in its own transaction), listed,
the targets their scope covers, who they concern, and the facts of their report."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import bindparam, distinct, func, select

from bot.store.coupons import LIVE_STATUSES
from bot.store.game_deliveries import GameDeliveries
from bot.store.incident_deliveries import IncidentDeliveries
from bot.store.incident_grant import NOT_ELIGIBLE, IncidentBatches, Plan, Target
from bot.store.incident_posts import IncidentPosts
from bot.store.incident_scope import IncidentScope
from bot.store.incident_tables import Incident, IncidentExclusion
from bot.store.models import AuditEntry, Coupon, Order, Player, utcnow
from bot.store.units import Fetch, Unit, UnitRunner

_OPEN = (
    select(*Incident.__table__.c).where(Incident.status == bindparam("status")).order_by(Incident.id.desc())
)

RUN_ACTIONS = ("incident.compensation_approved", "incident.grant_batch", "incident.compensation_resumed")
"""The audit actions of a compensation run's life (`last_activity`)."""


@dataclass(frozen=True)
class IncidentRecord:
    """A stored incident as callers read it (the columns of `Incident`, the scope parsed)."""

    id: int
    title: str
    notice_ko: str
    notice_en: str
    notice_version: int
    status: str
    scope: IncidentScope
    started_at: datetime
    ended_at: datetime | None
    created_by: str
    updated_at: datetime
    comp_per: str | None
    comp_amount: int | None
    comp_budget: int | None
    comp_player_cap: int | None
    comp_state: str | None
    comp_approved_by: str | None

    @classmethod
    def of(cls, row: Incident) -> IncidentRecord:
        values = {f.name: getattr(row, f.name) for f in fields(cls)}
        values["scope"] = IncidentScope.from_json(row.scope)
        return cls(**values)

    def plan(self, valid_days: int = 30) -> Plan | None:
        if self.comp_per is None or self.comp_amount is None:
            return None
        return Plan(
            self.id, self.comp_per, self.comp_amount, self.comp_budget, self.comp_player_cap, valid_days
        )

    def notice(self, locale: str) -> str:
        return self.notice_en if locale == "en" and self.notice_en else self.notice_ko


@dataclass(frozen=True)
class GrantSummary:
    """The incident's live coupons: how many, for how many players, and their total in KRW."""

    coupons: int
    players: int
    spent: int


class Incidents:
    """Incidents and their bulk grant (`batches`)."""

    def __init__(self, store: UnitRunner, game_deliveries: GameDeliveries | None = None) -> None:
        self._store = store
        self.batches = IncidentBatches(store, game_deliveries)
        self.posts = IncidentPosts(store)
        self.deliveries = IncidentDeliveries(store)

    async def _change(
        self, incident_id: int, actor: str, action: str, **values: Any
    ) -> IncidentRecord | None:
        async with self._store.session() as s, s.begin():
            row = await s.get(Incident, incident_id, with_for_update=True)
            if row is None:
                return None
            for name, value in values.items():
                setattr(row, name, value)
            row.updated_at = utcnow()
            s.add(
                AuditEntry(
                    actor=actor,
                    action=action,
                    target=f"incident:{incident_id}",
                    code="OK",
                    detail=_detail(values),
                )
            )
            await s.flush()
            return IncidentRecord.of(row)

    async def open(
        self, *, title: str, notice_ko: str, notice_en: str, scope: IncidentScope, actor: str, now: datetime
    ) -> IncidentRecord:
        async with self._store.session() as s, s.begin():
            row = Incident(
                title=title,
                notice_ko=notice_ko,
                notice_en=notice_en,
                scope=scope.to_json(),
                status="open",
                started_at=now,
                created_by=actor,
                updated_at=now,
                notice_version=1,
            )
            s.add(row)
            await s.flush()
            s.add(
                AuditEntry(
                    actor=actor,
                    action="incident.open",
                    target=f"incident:{row.id}",
                    code="OK",
                    detail=_detail({"title": title, "scope": scope.to_json()}),
                )
            )
            return IncidentRecord.of(row)

    async def update_notice(
        self, incident_id: int, *, notice_ko: str, notice_en: str | None, actor: str
    ) -> IncidentRecord | None:
        current = await self.get(incident_id)
        if current is None:
            return None
        return await self._change(
            incident_id,
            actor,
            "incident.update",
            notice_ko=notice_ko,
            notice_en=current.notice_en if notice_en is None else notice_en,
            notice_version=current.notice_version + 1,
        )

    async def close(self, incident_id: int, *, actor: str, now: datetime) -> IncidentRecord | None:
        return await self._change(incident_id, actor, "incident.close", status="closed", ended_at=now)

    async def set_plan(
        self, incident_id: int, plan: Plan | None, *, state: str, actor: str, **extra: Any
    ) -> IncidentRecord | None:
        values: dict[str, Any] = {"comp_state": state, **extra}
        if plan is not None:
            values.update(
                comp_per=plan.per,
                comp_amount=plan.amount,
                comp_budget=plan.budget,
                comp_player_cap=plan.player_cap,
            )
        return await self._change(incident_id, actor, f"incident.compensation_{state}", **values)

    async def set_planned_end(self, incident_id: int, end: datetime, *, actor: str) -> None:
        """Keep `end` as the open incident's end until it is closed, audited (`incident.planned_end`) in the
        same transaction (the row locked on PostgreSQL while it changes)."""
        async with self._store.session() as s, s.begin():
            row = await s.get(Incident, incident_id, with_for_update=True)
            assert row is not None
            row.ended_at = end
            s.add(
                AuditEntry(
                    actor=actor,
                    action="incident.planned_end",
                    target=f"incident:{incident_id}",
                    code="OK",
                    detail=json.dumps({"ended_at": end.isoformat()}),
                )
            )

    async def get(self, incident_id: int) -> IncidentRecord | None:
        async with self._store.session() as s:
            row = await s.get(Incident, incident_id)
            return IncidentRecord.of(row) if row is not None else None

    async def list(self, *, status: str | None = None) -> list[IncidentRecord]:
        query = select(Incident).order_by(Incident.id.desc())
        if status:
            query = query.where(Incident.status == status)
        async with self._store.session() as s:
            return [IncidentRecord.of(r) for r in (await s.execute(query)).scalars()]

    async def targets(self, incident: IncidentRecord, per: str) -> list[Target]:
        """What a grant `per` order or player covers, ordered by player id (then order id) in the
        database's own order (the batch unit reads live coupons by that player range)."""
        scope = incident.scope
        cond = scope.order_filter()
        query = select(Order.player_id, Order.id, Order.status).order_by(Order.player_id, Order.id)
        if cond is not None:
            query = query.where(cond)
        async with self._store.session() as s:
            rows = (await s.execute(query)).all()
            players: list[str] = []
            if per == "player" and scope.kind in ("all", "players") and not _order_filtered(scope):
                pq = select(Player.id).order_by(Player.id)
                if scope.kind == "players":
                    pq = pq.where(Player.id.in_(scope.player_ids or ("",)))
                players = list((await s.execute(pq)).scalars())
                known = set(players)  # ids of a CSV that name no player: reported, never granted
                players += [p for p in scope.player_ids if p not in known]
        if per == "order":
            return [Target(r.id, r.player_id, r.id, r.status) for r in rows]
        first: dict[str, Target] = {}  # insertion order is the database's player order
        for r in rows:  # the player's first order that may hold a coupon carries the player's coupon
            if r.player_id not in first or first[r.player_id].order_status in NOT_ELIGIBLE:
                first[r.player_id] = Target(r.player_id, r.player_id, r.id, r.status)
        if players:
            return [first.get(p) or Target(p, p, None, None) for p in players]
        return list(first.values())

    async def order_page(self, incident: IncidentRecord, after: str | None, limit: int) -> list[Target]:
        """The scope's orders of the next whole players after player id `after`, about `limit` of them
        (all of one player's orders, even more), in the order of `targets`: a run reads its targets a
        batch at a time through the player index, so no step holds them all or sorts them all."""
        base = select(Order.player_id, Order.id, Order.status).order_by(Order.player_id, Order.id)
        cond = incident.scope.order_filter()
        if cond is not None:
            base = base.where(cond)
        query = base.limit(limit) if after is None else base.where(Order.player_id > after).limit(limit)
        async with self._store.session() as s:
            rows = (await s.execute(query)).all()
            if len(rows) == limit:  # the last player's orders may go on: leave them to the next page
                last = rows[-1].player_id
                rows = [r for r in rows if r.player_id != last]
                if not rows:  # one player holds more than a page
                    rows = (await s.execute(base.where(Order.player_id == last))).all()
        return [Target(r.id, r.player_id, r.id, r.status) for r in rows]

    async def count_orders(self, incident: IncidentRecord) -> int:
        query = select(func.count(Order.id))
        cond = incident.scope.order_filter()
        if cond is not None:
            query = query.where(cond)
        async with self._store.session() as s:
            return int((await s.execute(query)).scalar_one())

    async def last_activity(self, incident_id: int) -> datetime | None:
        """When the incident's run last showed life in the audit (its approval, a grant batch, a resume):
        a run still going anywhere writes a row at every batch. By action first (indexed)."""
        query = select(func.max(AuditEntry.at)).where(
            AuditEntry.action.in_(RUN_ACTIONS), AuditEntry.target == f"incident:{incident_id}"
        )
        async with self._store.session() as s:
            latest = (await s.execute(query)).scalar_one()
        if isinstance(latest, str):  # SQLite's max() loses the column type
            latest = datetime.fromisoformat(latest)
        if latest is not None and latest.tzinfo is None:
            latest = latest.replace(tzinfo=UTC)
        return latest

    async def revision(self) -> tuple[int, int, str]:
        """A fingerprint of every incident's state (how many, their notice versions, the latest change): it
        changes when one is declared, its notice updated or it is closed. One cheap read: what a process
        watching for notice changes compares (`bot.players.web.widget.notice_watch`)."""
        query = select(
            func.count(Incident.id),
            func.coalesce(func.sum(Incident.notice_version), 0),
            func.max(Incident.updated_at),
        )
        async with self._store.session() as s:
            count, versions, latest = (await s.execute(query)).one()
        return int(count), int(versions), str(latest)

    async def open_for(self, player_id: str | None) -> list[IncidentRecord]:
        """The open incidents whose scope covers this player (unlinked: only those for all players). Every
        run reads them (their notices ride in the system prompt): the open ones in one store unit on the
        fast read path; an order-filtered scope's count of the player's orders on the engine (its filter
        binds lists and literals)."""

        def unit() -> Unit[list[IncidentRecord]]:
            return [IncidentRecord.of(row) for row in (yield Fetch(_OPEN, {"status": "open"}))]

        out: list[IncidentRecord] = []
        for incident in await self._store.run(unit, write=False, snapshot=False):
            scope = incident.scope
            if scope.kind == "all" and not _order_filtered(scope):
                out.append(incident)
            elif player_id is None:
                continue
            elif scope.kind == "players" and not _order_filtered(scope):
                if player_id in scope.player_ids:
                    out.append(incident)
            else:
                query = select(func.count(Order.id)).where(Order.player_id == player_id)
                cond = scope.order_filter()
                if cond is not None:
                    query = query.where(cond)
                async with self._store.session() as s:
                    if (await s.execute(query)).scalar_one():
                        out.append(incident)
        return out

    async def grant_summary(self, incident_id: int) -> GrantSummary:
        query = select(
            func.count(Coupon.id),
            func.count(distinct(Coupon.player_id)),
            func.coalesce(func.sum(Coupon.amount), 0),
        ).where(Coupon.idempotency_key.like(f"incident:{incident_id}:%"), Coupon.status.in_(LIVE_STATUSES))
        async with self._store.session() as s:
            n, players, spent = (await s.execute(query)).one()
        return GrantSummary(int(n), int(players), int(spent))

    async def run_counts(self, incident_id: int) -> tuple[int, int]:
        """(targets excluded so far, grant batches written so far): what any process reads of a run."""
        excluded = select(func.count(IncidentExclusion.id)).where(
            IncidentExclusion.incident_id == incident_id
        )
        batches = select(func.count(AuditEntry.id)).where(
            AuditEntry.action == "incident.grant_batch", AuditEntry.target == f"incident:{incident_id}"
        )
        async with self._store.session() as s:
            return int((await s.execute(excluded)).scalar_one()), int((await s.execute(batches)).scalar_one())

    async def exclusions(self, incident_id: int) -> list[IncidentExclusion]:
        query = (
            select(IncidentExclusion)
            .where(IncidentExclusion.incident_id == incident_id)
            .order_by(IncidentExclusion.id)
        )
        async with self._store.session() as s:
            return list((await s.execute(query)).scalars())


def _order_filtered(scope: IncidentScope) -> bool:
    return bool(scope.statuses or scope.item or scope.since or scope.until)


def _detail(values: dict[str, Any]) -> str:
    import json

    return json.dumps(values, ensure_ascii=False, default=str)
