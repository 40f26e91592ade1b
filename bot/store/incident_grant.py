"""`store.incidents.batches`: an incident's bulk grant — its plan (`Plan`), its targets, the reasons a
target gets nothing (`EXCLUSION_REASONS`) and the batch unit: one transaction per batch that takes the
incident's lock, reads what this incident already granted, decides each target (`decide_batch`, pure)
and writes the coupons, the exclusions and one audit row. Each coupon carries the idempotency key
`incident:<id>:<per>:<target>`, so the ledger's unique index makes a second run, a second process or a
restart grant nothing twice.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, func, select, text

from bot.store.coupon_codes import new_coupon_code
from bot.store.coupons import AUDIT_COLUMNS, INSERTED_COLUMNS, LIVE_STATUSES
from bot.store.game_deliveries import JOB_COLUMNS, GameDeliveries, GameDelivery, grant_job
from bot.store.incident_tables import Incident, IncidentExclusion
from bot.store.models import AuditEntry, Coupon, utcnow
from bot.store.units import Fetch, Insert, Lock, Unit, UnitRunner

EXCLUSION_REASONS = {
    "already_compensated": "이미 이 장애로 보상됨 / already compensated for this incident",
    "order_not_eligible": "보상 대상이 아닌 주문 상태 / order not eligible",
    "order_has_coupon": "주문에 이미 다른 쿠폰이 있음 / the order already holds a live coupon",
    "no_order": "쿠폰을 붙일 주문이 없음 / no order to attach the coupon to",
    "over_player_cap": "플레이어당 한도 초과 / over the per-player cap",
    "budget_reached": "예산 소진 / budget reached",
}
"""Why a target got no coupon; `already_compensated` is shown in previews, never stored as an exclusion."""

NOT_ELIGIBLE = ("cancelled", "refunded")
"""Order statuses a bulk grant never compensates."""


@dataclass(frozen=True)
class Target:
    """One thing a bulk grant may compensate: an order (per order) or a player (per player)."""

    target: str
    player_id: str
    order_id: str | None
    order_status: str | None


@dataclass(frozen=True)
class Plan:
    """A compensation plan: the amount per target, the optional total budget and per-player cap."""

    incident_id: int
    per: str
    amount: int
    budget: int | None = None
    player_cap: int | None = None
    valid_days: int = 30

    def key(self, target: str) -> str:
        return f"incident:{self.incident_id}:{self.per}:{target}"

    @property
    def key_pattern(self) -> str:
        """`LIKE` pattern of this incident's keys (a range would follow PostgreSQL's collation)."""
        return f"incident:{self.incident_id}:%"


@dataclass
class Granted:
    """What this incident's coupons hold so far (read inside the batch's transaction)."""

    keys: set[str] = field(default_factory=set)
    spent: int = 0
    by_player: Counter[str] = field(default_factory=Counter)
    live_orders: set[str] = field(default_factory=set)
    """Orders (in the batch's id range) whose one live-coupon slot is taken."""
    excluded: set[str] = field(default_factory=set)


@dataclass
class BatchOutcome:
    """One batch's decisions: the coupons to insert, the exclusions (target, order, player, reason)."""

    coupons: list[dict[str, Any]] = field(default_factory=list)
    exclusions: list[tuple[Target, str]] = field(default_factory=list)
    already: int = 0
    spent: int = 0


def decide_batch(
    plan: Plan, targets: Sequence[Target], granted: Granted, *, now: datetime, actor: str
) -> BatchOutcome:
    """Each target in order: already granted (by key), already excluded, else the first reason to
    exclude it, else a coupon. Pure; the caller writes the result. `granted` is updated as it goes."""
    out = BatchOutcome()
    expires = now + timedelta(days=plan.valid_days)
    for t in targets:
        key = plan.key(t.target)
        if key in granted.keys:
            out.already += 1
            continue
        if t.target in granted.excluded:
            continue
        reason = None
        if t.order_id is None:
            reason = "no_order"
        elif t.order_status in NOT_ELIGIBLE:
            reason = "order_not_eligible"
        elif t.order_id in granted.live_orders:
            reason = "order_has_coupon"
        elif plan.player_cap is not None and granted.by_player[t.player_id] + plan.amount > plan.player_cap:
            reason = "over_player_cap"
        elif plan.budget is not None and granted.spent + plan.amount > plan.budget:
            reason = "budget_reached"
        if reason is not None:
            out.exclusions.append((t, reason))
            granted.excluded.add(t.target)
            continue
        granted.keys.add(key)
        granted.spent += plan.amount
        granted.by_player[t.player_id] += plan.amount
        granted.live_orders.add(t.order_id or "")
        out.spent += plan.amount
        out.coupons.append(
            {
                "code": new_coupon_code(),
                "order_id": t.order_id,
                "player_id": t.player_id,
                "amount": plan.amount,
                "status": "active",
                "reason": f"incident:{plan.incident_id}",
                "issued_by": actor[:64],
                "idempotency_key": key,
                "created_at": now,
                "expires_at": expires,
            }
        )
    return out


LOCK_INCIDENT = select(Incident.id).where(Incident.id == bindparam("incident_id")).with_for_update()
"""Batches of one incident take turns, across processes: the budget and the caps are counted exactly."""
PLAYERS_COUPONS = select(
    Coupon.order_id, Coupon.player_id, Coupon.amount, Coupon.status, Coupon.idempotency_key
).where(Coupon.player_id >= bindparam("first"), Coupon.player_id <= bindparam("last"))
"""The coupons of the batch's players: targets come ordered by player id in the database's own order, so
this range holds every coupon a batch's decisions depend on (its keys, live slots, per-player sums)."""
SPENT = select(func.coalesce(func.sum(Coupon.amount), 0).label("spent")).where(
    Coupon.idempotency_key.like(bindparam("pattern")),
    text("coupons.status IN ('active', 'pending')"),  # LIVE_STATUSES; a literal IN list needs no values
)
"""What the incident's live coupons hold so far (read only when the plan has a budget)."""
EXCLUDED = select(IncidentExclusion.target).where(
    IncidentExclusion.incident_id == bindparam("incident_id"),
    IncidentExclusion.player_id >= bindparam("first"),
    IncidentExclusion.player_id <= bindparam("last"),
)
EXCLUSION_COLUMNS = ("incident_id", "target", "player_id", "order_id", "reason", "created_at")


def _granted_unit(plan: Plan, targets: Sequence[Target]) -> Unit[Granted]:
    """Reads (inside the caller's transaction) what this incident granted and excluded for the batch's
    players, and its total when the plan has a budget: work in proportion to the batch, not the run."""
    granted = Granted()
    if not targets:
        return granted
    span = {"first": targets[0].player_id, "last": targets[-1].player_id}
    prefix = plan.key_pattern[:-1]
    for row in (yield Fetch(PLAYERS_COUPONS, span)):
        live = row.status in LIVE_STATUSES
        if live:
            granted.live_orders.add(row.order_id)
        if row.idempotency_key is not None and row.idempotency_key.startswith(prefix):
            granted.keys.add(row.idempotency_key)
            if live:
                granted.by_player[row.player_id] += row.amount
    if plan.budget is not None:
        granted.spent = int((yield Fetch(SPENT, {"pattern": plan.key_pattern}, one=True)).spent)
    rows = yield Fetch(EXCLUDED, {"incident_id": plan.incident_id, **span})
    granted.excluded = {r.target for r in rows}
    return granted


def exclusion_rows(plan: Plan, out: BatchOutcome, now: datetime) -> list[dict[str, Any]]:
    return [
        {
            "incident_id": plan.incident_id,
            "target": t.target,
            "player_id": t.player_id,
            "order_id": t.order_id,
            "reason": reason,
            "created_at": now,
        }
        for t, reason in out.exclusions
    ]


class IncidentBatches:
    """The bulk grant's reads and its batch unit (`store.incidents.batches`)."""

    def __init__(self, store: UnitRunner, deliveries: GameDeliveries | None = None) -> None:
        self._store = store
        self._deliveries = deliveries

    async def granted(self, plan: Plan, targets: Sequence[Target]) -> Granted:
        """What the incident holds now, outside any write (the preview's facts)."""

        def unit() -> Unit[Granted]:
            return (yield from _granted_unit(plan, targets))

        return await self._store.run(unit, write=False, plain=True)

    async def grant(
        self, plan: Plan, targets: Sequence[Target], *, now: datetime, actor: str
    ) -> BatchOutcome:
        """One batch in one transaction; raises `RaceLost` when a unique index refused a row (nothing of
        the batch is stored then: run it again)."""

        deliver = self._deliveries is not None and self._deliveries.enabled

        def unit() -> Unit[BatchOutcome]:
            yield Lock(LOCK_INCIDENT, {"incident_id": plan.incident_id})
            granted = yield from _granted_unit(plan, targets)
            out = decide_batch(plan, targets, granted, now=now, actor=actor)
            if out.coupons:
                yield Insert(Coupon.__table__, INSERTED_COLUMNS, out.coupons)
                if deliver:  # the batch's grant jobs commit with its coupons (one statement), or nothing does
                    yield Insert(GameDelivery.__table__, JOB_COLUMNS, [grant_job(c) for c in out.coupons])
            if out.exclusions:
                yield Insert(IncidentExclusion.__table__, EXCLUSION_COLUMNS, exclusion_rows(plan, out, now))
            detail = {"issued": len(out.coupons), "excluded": len(out.exclusions), "spent": out.spent}
            audit = {
                "at": utcnow(),
                "actor": actor,
                "thread_id": None,
                "action": "incident.grant_batch",
                "target": f"incident:{plan.incident_id}",
                "code": "ISSUED" if out.coupons else "OK",
                "detail": json.dumps(detail),
            }
            yield Insert(AuditEntry.__table__, AUDIT_COLUMNS, [audit])
            return out

        # Hundreds of rows: decided off the loop thread (file SQLite: the whole unit; PostgreSQL: its Python
        # work between round trips), so live conversations keep their latency.
        return await self._store.run(unit, write=True, plain=True, off_loop=True)
