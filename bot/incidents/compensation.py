"""The bulk grant of an incident: a preview (who gets what, who is excluded and why, which coupon
rules the grant overrides), then the run: batches through the store's grant unit, each coupon under
the key (incident, order or player), so a crash, a restart, a second process or a second approval
never issues twice. The run yields to the event loop between batches and reports its progress. The
staff's decision on it (`propose`, `approve`, `cancel`) is what `/incident compensate` and the console
run; the command's wording stays with the command (`bot.staff.incidents`)."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.game.orders import OrderSource
from bot.incidents.scope_orders import pull_scope
from bot.incidents.tell import tell_compensated
from bot.store import RaceLost, Store
from bot.store.incident_grant import EXCLUSION_REASONS, Plan, Target, decide_batch
from bot.store.incidents import IncidentRecord
from bot.vocabulary.rule_names import coupon_rule_words

log = logging.getLogger(__name__)

DEFAULT_BATCH = 500
"""Targets a batch decides in one transaction. On file SQLite a batch runs off the loop thread (its own
connection on a worker thread), so its size no longer sets the loop's lag: measured (bench/incident_bulk.py,
10,000 orders, a 2-core machine at load 14) the run's longest loop step took 5.6 ms of CPU, where a
500-target batch on the loop took 25–190 ms. On PostgreSQL the batch's decisions, row decoding and binding
run on a worker thread between the driver's round trips (≈30 ms of CPU a batch held the loop before). Smaller
batches cost rate (100 gave 1,241/s: per-batch reads)."""
SAMPLES = 5


@dataclass(frozen=True)
class Limits:
    """The coupon rules a bulk grant is measured against (from `policies/coupon_rules.yaml`)."""

    eligible_statuses: tuple[str, ...] = ("delayed",)
    max_amount: int = 20_000
    staff_max_amount: int = 100_000
    daily_max_count: int = 3
    daily_max_amount: int = 50_000

    @classmethod
    def of(cls, rules: Any) -> Limits:
        """The limits of the coupon rules in force (`CouponRules`, or anything with the same fields)."""
        return cls(
            eligible_statuses=tuple(rules.eligible_statuses),
            max_amount=rules.max_amount,
            staff_max_amount=rules.staff_max_amount,
            daily_max_count=rules.daily_max_count,
            daily_max_amount=rules.daily_max_amount,
        )


@dataclass
class Preview:
    """What an approval would do now."""

    plan: Plan
    players: int = 0
    orders: int = 0
    total: int = 0
    excluded: Counter[str] = field(default_factory=Counter)
    samples: dict[str, list[str]] = field(default_factory=dict)
    """A few excluded targets per reason."""
    overrides: list[str] = field(default_factory=list)
    """The coupon rules the grant overrides, named (audited on approval)."""
    refused: str | None = None
    """Why this plan cannot be approved at all (an amount above the staff maximum)."""

    def text(self) -> str:
        p = self.plan
        per = "주문당 / per order" if p.per == "order" else "플레이어당 / per player"
        lines = [
            f"장애 #{p.incident_id} 보상 미리보기 / compensation preview: {p.amount:,}원 {per}",
            f"- 대상 / to compensate: 플레이어 {self.players:,}명 · 주문 {self.orders:,}건 · 합계 {self.total:,}원",
        ]
        if p.budget is not None:
            lines.append(f"- 예산 / budget: {p.budget:,}원")
        if p.player_cap is not None:
            lines.append(f"- 플레이어당 한도 / per-player cap: {p.player_cap:,}원")
        for reason, n in self.excluded.most_common():
            shown = ", ".join(self.samples.get(reason, []))
            lines.append(
                f"- 제외 / excluded: {n:,} · {EXCLUSION_REASONS[reason]} ({shown}{', …' if n > SAMPLES else ''})"
            )
        if self.overrides:
            named = (f"{coupon_rule_words(o, 'ko')}({o})" for o in self.overrides)
            lines.append("- 적용하지 않는 규칙 / rules overridden: " + ", ".join(named))
        if self.refused:
            lines.append(f"- 승인 불가 / cannot approve: {self.refused}")
        else:
            lines.append(
                f"승인: /incident compensate {p.incident_id} approve · 취소: /incident compensate {p.incident_id} cancel"
            )
        return "\n".join(lines)


def overrides_of(plan: Plan, orders: list[Target], limits: Limits) -> list[str]:
    """The rules of a player's own `issue_coupon` that this grant does not apply, named."""
    named = ["daily_max_count", "daily_max_amount"]
    if any(t.order_status not in limits.eligible_statuses for t in orders):
        named.append("eligible_statuses")
    if plan.amount > limits.max_amount:
        named.append("max_amount")
    return named


async def preview(
    store: Store,
    incident: IncidentRecord,
    plan: Plan,
    limits: Limits,
    *,
    now: datetime,
    orders: OrderSource | None = None,
) -> Preview:
    """The preview of `plan` on the incident's scope as it stands now (nothing is written but, with the
    studio's backend as `orders`, the scope's orders read fresh into the embedded mirror)."""
    await pull_scope(orders, incident)
    targets = await store.incidents.targets(incident, plan.per)
    granted = await store.incidents.batches.granted(plan, targets)
    out = Preview(plan)
    already = [t for t in targets if plan.key(t.target) in granted.keys]
    decided = decide_batch(plan, targets, granted, now=now, actor="preview")
    excluded = [(t, "already_compensated") for t in already] + decided.exclusions
    for t, reason in excluded:
        out.excluded[reason] += 1
        if len(out.samples.setdefault(reason, [])) < SAMPLES:
            out.samples[reason].append(t.target)
    out.orders = len(decided.coupons)
    out.players = len({c["player_id"] for c in decided.coupons})
    out.total = decided.spent
    granted_targets = {c["idempotency_key"] for c in decided.coupons}
    out.overrides = overrides_of(plan, [t for t in targets if plan.key(t.target) in granted_targets], limits)
    if plan.amount > limits.staff_max_amount:
        out.refused = (
            f"{plan.amount:,}원 > {coupon_rule_words('staff_max_amount', 'ko')}(staff_max_amount) "
            f"{limits.staff_max_amount:,}원"
        )
    return out


@dataclass(frozen=True)
class Progress:
    """How far a run is: targets done of total, coupons issued and targets excluded by this run."""

    incident_id: int
    done: int
    total: int
    issued: int
    excluded: int
    spent: int


ProgressSink = Callable[[Progress], Awaitable[None] | None]


@dataclass(frozen=True)
class RunResult:
    incident_id: int
    issued: int
    """Coupons this run wrote (a resumed or second run counts only its own)."""
    already: int
    """Targets an earlier run (or another process) had already granted."""
    excluded: int
    spent: int
    ok: bool = True
    message: str = ""


async def _grant(store: Store, plan: Plan, batch: list[Target], now: datetime, actor: str):  # type: ignore[no-untyped-def]
    for _attempt in range(5):
        try:
            return await store.incidents.batches.grant(plan, batch, now=now, actor=actor)
        except RaceLost:  # a player's own coupon took an order's slot meanwhile, or a code collided
            log.info("incident %s: a batch lost a race; deciding it again", plan.incident_id)
    raise RuntimeError(f"incident {plan.incident_id}: a batch lost five races in a row")


async def _pages(
    store: Store, incident: IncidentRecord, plan: Plan, size: int
) -> AsyncIterator[list[Target]]:
    """The targets a batch at a time: orders page by page from the database (no step holds 10,000
    rows on the event loop); players (fewer) read at once, then cut."""
    if plan.per == "order":
        page = await store.incidents.order_page(incident, None, size)
        while page:
            # The next page is read (on the driver's thread) while this one is granted.
            following = asyncio.ensure_future(store.incidents.order_page(incident, page[-1].player_id, size))
            try:
                yield page
            except BaseException:
                following.cancel()
                raise
            page = await following
        return
    targets = await store.incidents.targets(incident, plan.per)
    for start in range(0, len(targets), size):
        yield targets[start : start + size]


async def run_compensation(
    store: Store,
    incident_id: int,
    *,
    actor: str,
    clock: Callable[[], datetime],
    batch_size: int = DEFAULT_BATCH,
    progress: ProgressSink | None = None,
    valid_days: int = 30,
    timezone: str = "Asia/Seoul",
) -> RunResult:
    """Issue the approved plan's coupons (resumable: run it again after a crash; what exists is kept)."""
    incident = await store.incidents.get(incident_id)
    plan = incident.plan(valid_days) if incident is not None else None
    if incident is None or plan is None or incident.comp_state not in ("approved", "done"):
        return RunResult(incident_id, 0, 0, 0, 0, ok=False, message="no approved compensation plan")
    pages = _pages(store, incident, plan, batch_size)
    total = await store.incidents.count_orders(incident) if plan.per == "order" else None
    issued = already = excluded = spent = done = 0
    async for batch in pages:
        out = await _grant(store, plan, batch, clock(), actor)
        issued += len(out.coupons)
        already += out.already
        excluded += len(out.exclusions)
        spent += out.spent
        done += len(batch)
        if progress is not None:
            sent = progress(Progress(incident_id, done, max(total or 0, done), issued, excluded, spent))
            if inspect.isawaitable(sent):
                await sent
        await asyncio.sleep(0)  # live conversations run between batches
    if incident.comp_state != "done":
        await store.incidents.set_plan(incident_id, None, state="done", actor=actor)
    # The conversations that asked are told what they got (once each, whichever run gets here first).
    await tell_compensated(store, incident_id, timezone=timezone)
    return RunResult(incident_id, issued, already, excluded, spent)


# ---- the staff's decision -----------------------------------------------------------------------------

APPROVABLE = ("previewed", "approved", "done")
"""Plan states an approval takes: a fresh preview, or an approved run to resume."""


@dataclass(frozen=True)
class Approval:
    """What approving an incident's plan did: nothing to approve (`preview` None), refused by its fresh
    preview (`result` None), or the run's result."""

    preview: Preview | None = None
    result: RunResult | None = None


async def propose(
    store: Store,
    incident: IncidentRecord,
    plan: Plan,
    limits: Limits,
    *,
    actor: str,
    now: datetime,
    orders: OrderSource | None = None,
) -> Preview:
    """The plan's preview, kept as the incident's plan waiting for approval (`previewed`)."""
    shown = await preview(store, incident, plan, limits, now=now, orders=orders)
    await store.incidents.set_plan(incident.id, plan, state="previewed", actor=actor)
    return shown


async def approve(
    store: Store,
    incident: IncidentRecord,
    limits: Limits,
    *,
    actor: str,
    clock: Callable[[], datetime],
    orders: OrderSource | None = None,
    progress: ProgressSink | None = None,
    valid_days: int = 30,
    timezone: str = "Asia/Seoul",
) -> Approval:
    """Preview the waiting plan again (the scope may have grown), approve it with the rules it overrides
    audited (`incident.override`), then run it."""
    plan = incident.plan(valid_days)
    if plan is None or incident.comp_state not in APPROVABLE:
        return Approval()
    shown = await preview(store, incident, plan, limits, now=clock(), orders=orders)
    if shown.refused:
        return Approval(shown)
    await store.incidents.set_plan(incident.id, None, state="approved", actor=actor, comp_approved_by=actor)
    await store.audit(
        actor=actor,
        action="incident.override",
        target=f"incident:{incident.id}",
        code="OK",
        detail={"overrides": shown.overrides, "orders": shown.orders, "total": shown.total},
    )
    result = await run_compensation(
        store,
        incident.id,
        actor=actor,
        clock=clock,
        progress=progress,
        valid_days=valid_days,
        timezone=timezone,
    )
    return Approval(shown, result)


async def cancel(store: Store, incident_id: int, *, actor: str) -> None:
    """Drop the incident's plan (`cancelled`); coupons already issued stay."""
    await store.incidents.set_plan(incident_id, None, state="cancelled", actor=actor)
