"""Support analytics: conversations, resolution, first-answer time, coupons, policy sections,
tool errors and feedback, computed by queries over the store (SQLite and PostgreSQL alike).

A *conversation* (DESIGN.md §7) is one player's runs in one thread, split after `idle_minutes` without
a message. Each conversation ends in exactly one resolution, looked up over
[its first message, its last answer + `resolution_window_minutes`] among the events that concern it: an
escalation counts for the player who asked for it, a staff coupon action for the player whose order it
is; an event that names nobody (`/handoff`, `/resume`, `/link`) for the thread's conversation whose player
spoke last before it. So in a shared Discord channel one player's escalation never marks another's conversation.

- `handed_off`: staff took the thread over (`/handoff` or the Take over button);
- `staff_resolved`: otherwise a staff action on the thread (a coupon issued, approved or rejected by
  staff, `/resume`, a link);
- `escalated`: otherwise an `escalate_to_staff` request nobody acted on yet;
- `bot_resolved`: none of these, and the window after the last answer has passed;
- `open`: none of these yet, but the window has not passed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from bot.analytics.percentiles import percentile
from bot.analytics.staff_response import SlaTargets, escalation_timings, sla_figures
from bot.store import Store, utcnow
from bot.store.support_facts import answered_runs, resolution_events, window_counts

STATS_KEYS = (
    "conversations",
    "bot_resolution_rate",
    "escalation_rate",
    "handoffs",
    "first_answer_seconds_p50",
    "first_answer_seconds_p90",
    "feedback_positive_share",
    "feedback_votes",
    "coupons_issued",
    "coupons_rejected_by_code",
    "coupon_amount_by_day",
    "top_policy_sections",
    "tool_errors_by_code",
    "first_staff_response_seconds_p50",
    "first_staff_response_seconds_p90",
    "sla_first_response_met_share",
    "policy_gaps",
)
"""The keys of `arca-bot stats --json`, in order."""

DEFAULT_DAYS = 7
DEFAULT_IDLE_MINUTES = 30
DEFAULT_RESOLUTION_WINDOW_MINUTES = 60
DEFAULT_TIMEZONE = "Asia/Seoul"
"""The business time zone `coupon_amount_by_day` counts calendar days in (`ARCA_TIMEZONE`'s default)."""
TOP_SECTIONS = 5

STAFF_ACTIONS = ("coupon.staff_issue", "coupon.approve", "coupon.revoke", "resume", "link")
"""Audit actions that count as a staff action on a thread (made by a `staff:` actor)."""
COUPON_ACTIONS = ("coupon.staff_issue", "coupon.approve", "coupon.revoke")
"""Staff actions whose target is an order: they concern the conversation of the order's player."""
ISSUED_STATUSES = ("active", "revoked")
"""Coupons that were issued (a revoked one was issued first); `pending` and `rejected` never were."""
ISSUE_SUCCESS_CODES = ("ISSUED", "PENDING_APPROVAL", "OK")


@dataclass
class Conversation:
    thread_id: str
    player: str
    started_at: datetime
    first_answer_at: datetime
    last_answer_at: datetime
    runs: int = 1
    resolution: str = "open"
    escalated: bool = False
    run_starts: list[datetime] = field(default_factory=list)
    """When each of its runs started (its player's messages)."""

    @property
    def first_answer_seconds(self) -> float:
        return (self.first_answer_at - self.started_at).total_seconds()


async def conversations(
    store: Store,
    *,
    since: datetime,
    now: datetime,
    idle_minutes: int = DEFAULT_IDLE_MINUTES,
    resolution_window_minutes: int = DEFAULT_RESOLUTION_WINDOW_MINUTES,
) -> list[Conversation]:
    """The conversations that started at or after `since`, each with its resolution."""
    idle = timedelta(minutes=idle_minutes)
    window = timedelta(minutes=resolution_window_minutes)
    found: list[Conversation] = []
    current: Conversation | None = None
    for run in await answered_runs(store, until=now):
        thread_id, player, started, answered = run.thread_id, run.player, run.started_at, run.answered_at
        same = current is not None and (current.thread_id, current.player) == (thread_id, player)
        if same and started - current.last_answer_at <= idle:
            current.last_answer_at = max(current.last_answer_at, answered)
            current.runs += 1
            current.run_starts.append(started)
            continue
        current = Conversation(thread_id, player, started, answered, answered, run_starts=[started])
        found.append(current)
    by_thread: dict[str, list[Conversation]] = defaultdict(list)
    for c in found:
        by_thread[c.thread_id].append(c)
    found = [c for c in found if c.started_at >= since]
    threads = sorted({c.thread_id for c in found})
    if not threads:
        return []
    horizon = max(c.last_answer_at for c in found) + window
    earliest = min(c.started_at for c in found)
    events = await resolution_events(
        store,
        threads,
        start=earliest,
        end=horizon,
        staff_actions=STAFF_ACTIONS,
        coupon_actions=COUPON_ACTIONS,
    )
    handoffs, staff, escalations = events.handoffs, events.staff, events.escalations
    for c in found:
        end = c.last_answer_at + window

        def within(
            events: dict[str, list[tuple[datetime, str | None]]], c: Conversation = c, end: datetime = end
        ) -> bool:
            return any(
                c.started_at <= at <= end and _concerns(c, at, player, by_thread[c.thread_id])
                for at, player in events.get(c.thread_id, ())
            )

        c.escalated = within(escalations)
        if within(handoffs):
            c.resolution = "handed_off"
        elif within(staff):
            c.resolution = "staff_resolved"
        elif c.escalated:
            c.resolution = "escalated"
        elif now >= end:
            c.resolution = "bot_resolved"
        else:
            c.resolution = "open"
    return found


def _concerns(c: Conversation, at: datetime, player: str | None, thread: list[Conversation]) -> bool:
    """Whether an event of `c`'s thread at `at` (about `player`; None: about nobody, then about the
    conversation whose player spoke last before it) concerns `c`."""
    if player is not None:
        return player == c.player

    def last_spoke(other: Conversation) -> datetime | None:
        return max((t for t in other.run_starts if t <= at), default=None)

    spoke = {id(o): t for o in thread if (t := last_spoke(o)) is not None}
    return bool(spoke) and spoke.get(id(c)) == max(spoke.values())


async def compute_stats(
    store: Store,
    *,
    days: int = DEFAULT_DAYS,
    now: datetime | None = None,
    idle_minutes: int = DEFAULT_IDLE_MINUTES,
    resolution_window_minutes: int = DEFAULT_RESOLUTION_WINDOW_MINUTES,
    zone: tzinfo | str = DEFAULT_TIMEZONE,
    sla: SlaTargets | None = None,
) -> dict[str, Any]:
    """Every figure of `arca-bot stats` over the last `days` days (keys: `STATS_KEYS`).

    `coupon_amount_by_day` sums the issued coupons per calendar day in the business time zone `zone`
    (`ARCA_TIMEZONE`, Asia/Seoul by default: the days of the daily coupon caps), not per UTC day; its keys
    are `YYYY-MM-DD` in that zone."""
    zone = ZoneInfo(zone) if isinstance(zone, str) else zone
    now = now or utcnow()
    since = now - timedelta(days=days)
    convs = await conversations(
        store,
        since=since,
        now=now,
        idle_minutes=idle_minutes,
        resolution_window_minutes=resolution_window_minutes,
    )
    total = len(convs)
    first_answers = [c.first_answer_seconds for c in convs]
    counts = await window_counts(
        store,
        since=since,
        until=now,
        issued_statuses=ISSUED_STATUSES,
        issue_success_codes=ISSUE_SUCCESS_CODES,
        top_sections=TOP_SECTIONS,
    )
    by_day: dict[str, int] = defaultdict(int)
    for created, amount in counts.issued:
        by_day[created.astimezone(zone).date().isoformat()] += amount
    rejected, sections, errors = counts.refused, counts.sections, counts.tool_errors
    gaps, votes, positive, coupons_issued = (
        counts.policy_gaps,
        counts.votes,
        counts.positive_votes,
        counts.coupons_issued,
    )
    staff = sla_figures(await escalation_timings(store, since=since, until=now), sla or SlaTargets(), now)
    return {
        "conversations": total,
        "bot_resolution_rate": _share(sum(c.resolution == "bot_resolved" for c in convs), total),
        "escalation_rate": _share(sum(c.escalated for c in convs), total),
        "handoffs": sum(c.resolution == "handed_off" for c in convs),
        "first_answer_seconds_p50": round(percentile(first_answers, 50), 3),
        "first_answer_seconds_p90": round(percentile(first_answers, 90), 3),
        "feedback_positive_share": _share(int(positive), int(votes)),
        "feedback_votes": int(votes),
        "coupons_issued": int(coupons_issued),
        "coupons_rejected_by_code": {
            str(code or "UNKNOWN"): int(n) for code, n in sorted(rejected, key=_key)
        },
        "coupon_amount_by_day": dict(sorted(by_day.items())),
        "top_policy_sections": [{"section": name, "count": int(n)} for name, n in sections],
        "tool_errors_by_code": {str(code): int(n) for code, n in sorted(errors, key=_key)},
        "first_staff_response_seconds_p50": staff["first_staff_response_seconds_p50"],
        "first_staff_response_seconds_p90": staff["first_staff_response_seconds_p90"],
        "sla_first_response_met_share": staff["sla_first_response_met_share"],
        "policy_gaps": int(gaps),
    }


def _key(row: Any) -> str:
    return str(row[0] or "")


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def format_stats(stats: dict[str, Any], days: int) -> str:
    """The human-readable form (`arca-bot stats`, `/stats`), Korean first."""
    pct = lambda v: f"{v * 100:.1f}%"  # noqa: E731
    lines = [
        f"지원 통계 최근 {days}일 / support stats, last {days} days",
        f"- 대화 / conversations: {stats['conversations']}",
        f"- 봇 해결률 / bot resolution rate: {pct(stats['bot_resolution_rate'])}",
        f"- 에스컬레이션 비율 / escalation rate: {pct(stats['escalation_rate'])}",
        f"- 상담원 전환 / handoffs: {stats['handoffs']}",
        f"- 첫 답변 시간 / first answer p50 · p90: {stats['first_answer_seconds_p50']:.1f}s · "
        f"{stats['first_answer_seconds_p90']:.1f}s",
        f"- 피드백 / feedback: 👍 {pct(stats['feedback_positive_share'])} of {stats['feedback_votes']} votes",
        f"- 발급 쿠폰 / coupons issued: {stats['coupons_issued']}",
        f"- 첫 상담원 응답 / first staff response p50 · p90: {stats['first_staff_response_seconds_p50']:.0f}s · "
        f"{stats['first_staff_response_seconds_p90']:.0f}s · SLA met {pct(stats['sla_first_response_met_share'])}",
        f"- 정책이 없는 질문 / questions without a policy: {stats['policy_gaps']}",
    ]
    if stats["coupon_amount_by_day"]:
        days_text = ", ".join(f"{d} {amount:,}원" for d, amount in stats["coupon_amount_by_day"].items())
        lines.append(f"- 일별 쿠폰 금액 / coupon amount by day: {days_text}")
    if stats["coupons_rejected_by_code"]:
        lines.append(f"- 거절된 발급 / refused issuances: {_pairs(stats['coupons_rejected_by_code'])}")
    if stats["top_policy_sections"]:
        top = ", ".join(f"{t['section']} ({t['count']})" for t in stats["top_policy_sections"])
        lines.append(f"- 많이 찾은 정책 / top policy sections: {top}")
    if stats["tool_errors_by_code"]:
        lines.append(f"- 도구 오류 / tool errors: {_pairs(stats['tool_errors_by_code'])}")
    return "\n".join(lines)


def _pairs(mapping: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in mapping.items())
