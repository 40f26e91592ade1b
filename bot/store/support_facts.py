"""What support analytics reads (`bot.analytics.stats`): the answered runs conversations are cut from,
the events that resolve a conversation (hand-offs, staff actions, escalations) and a window's counts of
coupons, refusals, cited policy sections, tool errors, policy gaps and votes. SQLite and PostgreSQL
alike; the rules that turn these into figures stay in analytics."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import String, and_, case, func, literal, or_, select

from bot.store.database import Store
from bot.store.models import AuditEntry, Coupon, Escalation, Feedback, Order, Run, RunCitation, RunToolCall
from bot.store.policy_gaps import PolicyGap

_NOBODY = literal(None, String)
"""The player column of an event that names nobody."""

Events = dict[str, list[tuple[datetime, str | None]]]
"""Thread id → (time, player label or None: it names nobody) of each event."""


@dataclass(frozen=True)
class AnsweredRun:
    thread_id: str
    player: str
    started_at: datetime
    answered_at: datetime


async def answered_runs(store: Store, *, until: datetime) -> list[AnsweredRun]:
    """Every run started at `until` or before, by thread, then player, then start."""
    async with store.session() as s:
        rows = (
            await s.execute(
                select(Run.thread_id, Run.player, Run.started_at, Run.answered_at)
                .where(Run.started_at <= until)
                .order_by(Run.thread_id, Run.player, Run.started_at)
            )
        ).all()
    return [AnsweredRun(t, p, st, a) for t, p, st, a in rows]


@dataclass(frozen=True)
class ResolutionEvents:
    """The events of some threads in a time span that resolve a conversation."""

    handoffs: Events
    """Takeovers (`handoff`): they name nobody."""
    staff: Events
    """Successful staff actions; a coupon action names the order's player."""
    escalations: Events
    """Escalations, naming the player or Discord user who asked."""


async def resolution_events(
    store: Store,
    threads: Sequence[str],
    *,
    start: datetime,
    end: datetime,
    staff_actions: Sequence[str],
    coupon_actions: Sequence[str],
) -> ResolutionEvents:
    """The hand-offs, staff actions (`staff_actions` by a `staff:` actor with code OK / ISSUED; those of
    `coupon_actions` name the player of the order they target) and escalations of `threads` from
    `start` to `end` (both included)."""
    threads = list(threads)
    # A coupon's order row always exists, with ARCA_ORDER_SOURCE=http too (the source mirrors each order
    # it reads before a coupon can name it), so this join needs no call to the game's backend.
    order_player = case(
        (AuditEntry.action.in_(list(coupon_actions)), "player:" + Order.player_id), else_=_NOBODY
    )
    asker = case(
        (Escalation.player_id.is_not(None), "player:" + Escalation.player_id),
        (Escalation.discord_id.is_not(None), "discord:" + Escalation.discord_id),
        else_=_NOBODY,
    )
    async with store.session() as s:
        handoffs = await _events(
            s,
            select(AuditEntry.thread_id, AuditEntry.at, _NOBODY).where(
                AuditEntry.action == "handoff", AuditEntry.thread_id.in_(threads)
            ),
            start,
            end,
            AuditEntry.at,
        )
        staff = await _events(
            s,
            select(AuditEntry.thread_id, AuditEntry.at, order_player)
            .outerjoin(Order, Order.id == AuditEntry.target)
            .where(
                AuditEntry.action.in_(list(staff_actions)),
                AuditEntry.actor.like("staff:%"),
                AuditEntry.code.in_(("OK", "ISSUED")),
                AuditEntry.thread_id.in_(threads),
            ),
            start,
            end,
            AuditEntry.at,
        )
        escalations = await _events(
            s,
            select(Escalation.thread_id, Escalation.created_at, asker).where(
                Escalation.thread_id.in_(threads)
            ),
            start,
            end,
            Escalation.created_at,
        )
    return ResolutionEvents(handoffs, staff, escalations)


async def _events(s: Any, query: Any, start: datetime, end: datetime, column: Any) -> Events:
    """(time, player label or None) of each event by thread, from `(thread_id, at, player)` rows."""
    rows = (await s.execute(query.where(column >= start, column <= end))).all()
    events: Events = {}
    for thread_id, at, player in rows:
        events.setdefault(thread_id, []).append((at, player))
    return events


@dataclass(frozen=True)
class WindowCounts:
    """A time window's raw counts for `arca-bot stats`."""

    coupons_issued: int
    issued: list[tuple[datetime, int]]
    """(created at, amount) of each issued coupon."""
    refused: list[tuple[str | None, int]]
    """(code, count) of the coupon issuances that did not succeed."""
    sections: list[tuple[str, int]]
    """(policy section, citations), most cited first."""
    tool_errors: list[tuple[str, int]]
    """(result code, count) of failed tool calls."""
    policy_gaps: int
    votes: int
    positive_votes: int


async def window_counts(
    store: Store,
    *,
    since: datetime,
    until: datetime,
    issued_statuses: Sequence[str],
    issue_success_codes: Sequence[str],
    top_sections: int,
) -> WindowCounts:
    """The counts of the window [since, until]: coupons in `issued_statuses`, issuances whose code is
    not one of `issue_success_codes`, the `top_sections` most cited sections, failed tool calls, policy
    gaps and votes (by their last change)."""
    async with store.session() as s:
        issued_where = and_(
            Coupon.status.in_(list(issued_statuses)), Coupon.created_at >= since, Coupon.created_at <= until
        )
        coupons_issued = (await s.execute(select(func.count(Coupon.id)).where(issued_where))).scalar_one()
        issued = [
            (created, int(amount))
            for created, amount in await s.execute(
                select(Coupon.created_at, Coupon.amount).where(issued_where)
            )
        ]
        refused = (
            await s.execute(
                select(AuditEntry.code, func.count(AuditEntry.id))
                .where(
                    AuditEntry.action.in_(("coupon.issue", "coupon.staff_issue")),
                    or_(AuditEntry.code.is_(None), AuditEntry.code.not_in(list(issue_success_codes))),
                    AuditEntry.at >= since,
                    AuditEntry.at <= until,
                )
                .group_by(AuditEntry.code)
            )
        ).all()
        count = func.count(RunCitation.id)
        sections = (
            await s.execute(
                select(RunCitation.section, count)
                .where(RunCitation.at >= since, RunCitation.at <= until)
                .group_by(RunCitation.section)
                .order_by(count.desc(), RunCitation.section)
                .limit(top_sections)
            )
        ).all()
        errors = (
            await s.execute(
                select(RunToolCall.code, func.count(RunToolCall.id))
                .where(RunToolCall.ok.is_(False), RunToolCall.at >= since, RunToolCall.at <= until)
                .group_by(RunToolCall.code)
            )
        ).all()
        gaps = (
            await s.execute(
                select(func.count(PolicyGap.id)).where(
                    PolicyGap.created_at >= since, PolicyGap.created_at <= until
                )
            )
        ).scalar_one()
        votes, positive = (
            await s.execute(
                select(
                    func.count(Feedback.id),
                    func.coalesce(func.sum(case((Feedback.vote == 1, 1), else_=0)), 0),
                ).where(Feedback.updated_at >= since, Feedback.updated_at <= until)
            )
        ).one()
    return WindowCounts(
        coupons_issued=int(coupons_issued),
        issued=issued,
        refused=[(code, int(n)) for code, n in refused],
        sections=[(name, int(n)) for name, n in sections],
        tool_errors=[(code, int(n)) for code, n in errors],
        policy_gaps=int(gaps),
        votes=int(votes),
        positive_votes=int(positive),
    )
