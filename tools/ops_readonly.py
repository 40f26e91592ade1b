"""Read-only, staff-only tools for the ops drafting worker (`/ops draft`): order and coupon figures.

They only count and sum; nothing here writes to the ledger, so a drafting run can never change money.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field

from bot.game.orders import SourceUnavailable
from bot.store import ORDER_STATUSES
from bot.store.ops_totals import coupon_totals_by_status, order_totals
from tools.base import ResultCode, Tool, ToolContext, ToolRegistry, ToolResult, tool
from tools.local_time import local_midnight
from tools.money import format_krw
from tools.order_views import unavailable_result

COUPON_STATUS_LABELS: dict[str, tuple[str, str]] = {
    "active": ("사용 가능", "active"),
    "pending": ("승인 대기", "awaiting approval"),
    "revoked": ("회수됨", "revoked"),
    "rejected": ("반려됨", "rejected"),
}

WORKER_BASE_TOOLS = ("lookup_order", "search_policy")
"""Read-only tools of the support registry the ops worker may also use."""

_SINCE_HELP = "First day of the period (inclusive), YYYY-MM-DD in the service time zone, e.g. 2026-11-01. Omit for no lower bound."
_UNTIL_HELP = "Last day of the period (inclusive), YYYY-MM-DD, e.g. 2026-11-30. Omit for up to now."


class OrderStatsArgs(BaseModel):
    since: str | None = Field(default=None, description=_SINCE_HELP)
    until: str | None = Field(default=None, description=_UNTIL_HELP)
    status: str | None = Field(
        default=None,
        description="Only orders with this status code, e.g. delayed. One of: "
        + ", ".join(ORDER_STATUSES)
        + ".",
    )


class CouponTotalsArgs(BaseModel):
    since: str | None = Field(default=None, description=_SINCE_HELP)
    until: str | None = Field(default=None, description=_UNTIL_HELP)


class _PeriodError(ValueError):
    pass


def _parse_day(raw: str | None, name: str) -> date | None:
    if raw is None or not raw.strip():
        return None
    try:
        return date.fromisoformat(raw.strip()[:10])
    except ValueError:
        raise _PeriodError(f"'{name}' must be a date like 2026-11-01 (got {raw!r})") from None


def _period(args: Any, timezone: str) -> tuple[datetime | None, datetime | None, str]:
    """[start, end) as aware datetimes for whole calendar days in `timezone`, and a label for messages."""
    since = _parse_day(args.since, "since")
    until = _parse_day(args.until, "until")
    if since and until and until < since:
        raise _PeriodError(f"'until' ({until}) is before 'since' ({since})")
    start = local_midnight(since, timezone) if since else None
    end = local_midnight(until + timedelta(days=1), timezone) if until else None
    label = f"{since or '…'} ~ {until or '…'}" if (since or until) else "전체 기간 / all time"
    return start, end, label


def _period_error(ctx: ToolContext, exc: _PeriodError) -> ToolResult:
    return ToolResult.error(
        ctx.say(
            f"기간을 읽을 수 없습니다: {exc}. 날짜는 YYYY-MM-DD 형식으로 다시 호출하세요.",
            f"Cannot read the period: {exc}. Call again with dates as YYYY-MM-DD.",
        ),
        reason="bad_period",
    )


@tool(name="order_stats", staff_only=True)
async def order_stats(args: OrderStatsArgs, ctx: ToolContext) -> ToolResult:
    """Count orders per status (read-only, staff only): number of orders, number of players and the total
    amount for each status, optionally for a period of order dates and one status. Use it for figures such
    as how many orders a delivery delay affects. Example: {"status": "delayed"} or
    {"since": "2026-11-01", "until": "2026-11-30"}.
    """
    status = (args.status or "").strip().lower() or None
    if status is not None and status not in ORDER_STATUSES:
        return ToolResult.error(
            ctx.say(
                f"알 수 없는 주문 상태 '{args.status}'입니다. 다음 중 하나로 다시 호출하세요: {', '.join(ORDER_STATUSES)}.",
                f"Unknown order status '{args.status}'. Call again with one of: {', '.join(ORDER_STATUSES)}.",
            ),
            reason="bad_status",
        )
    try:
        start, end, label = _period(args, ctx.services.timezone)
    except _PeriodError as exc:
        return _period_error(ctx, exc)
    if ctx.orders.name != "builtin":
        try:
            by_status = await _stats_from_source(ctx, start, end, status)
        except SourceUnavailable:
            return unavailable_result(ctx.locale)
        return _stats_result(ctx, by_status, status, label)
    totals = await order_totals(ctx.store, start=start, end=end, status=status)
    by_status = {k: {"orders": t.orders, "players": t.players, "amount": t.amount} for k, t in totals.items()}
    return _stats_result(ctx, by_status, status, label)


async def _stats_from_source(
    ctx: ToolContext, start: datetime | None, end: datetime | None, status: str | None
) -> dict[str, dict[str, int]]:
    """The same figures over the studio's backend: its paged order search, counted here (the period is
    by order date, so it is applied to each order read)."""
    counts: dict[str, dict[str, int]] = {}
    players: dict[str, set[str]] = {}
    async for page in ctx.orders.search(statuses=(status,) if status else ()):
        for o in page:
            if (start and o.ordered_at and o.ordered_at < start) or (
                end and o.ordered_at and o.ordered_at >= end
            ):
                continue
            row = counts.setdefault(o.status, {"orders": 0, "players": 0, "amount": 0})
            row["orders"] += 1
            row["amount"] += o.amount
            players.setdefault(o.status, set()).add(o.player_id)
    for code, row in counts.items():
        row["players"] = len(players[code])
    return counts


def _stats_result(
    ctx: ToolContext, by_status: dict[str, dict[str, int]], status: str | None, label: str
) -> ToolResult:
    total_orders = sum(v["orders"] for v in by_status.values())
    total_amount = sum(v["amount"] for v in by_status.values())
    loc = ctx.locale
    scope = ctx.say(f"상태 {status}", f"status {status}") if status else ctx.say("모든 상태", "all statuses")
    lines = [
        ctx.say(
            f"주문 통계 ({scope}, 주문일 기준 {label}): 총 {total_orders:,}건, 합계 {format_krw(total_amount, loc)}",
            f"Order statistics ({scope}, by order date, {label}): {total_orders:,} orders, "
            f"total {format_krw(total_amount, loc)}",
        )
    ]
    for code in ORDER_STATUSES:  # the fixed status order reads better than the database's
        v = by_status.get(code)
        if v is None:
            continue
        lines.append(
            ctx.say(
                f"- {code} {ORDER_STATUSES[code]}: {v['orders']:,}건 (플레이어 {v['players']:,}명), "
                f"합계 {format_krw(v['amount'], loc)}",
                f"- {code}: {v['orders']:,} orders ({v['players']:,} players), total {format_krw(v['amount'], loc)}",
            )
        )
    if not by_status:
        lines.append(ctx.say("- 해당하는 주문이 없습니다.", "- No matching orders."))
    return ToolResult(
        ok=True,
        code=ResultCode.OK,
        message="\n".join(lines),
        data={
            "period": label,
            "status": status,
            "by_status": by_status,
            "total_orders": total_orders,
            "total_amount": total_amount,
        },
    )


@tool(name="coupon_totals", staff_only=True)
async def coupon_totals(args: CouponTotalsArgs, ctx: ToolContext) -> ToolResult:
    """Sum up compensation coupons (read-only, staff only): how many were issued and their total in KRW,
    split into active, pending approval, revoked and rejected, optionally for a period of issue dates; also
    the current coupon limits. Use it for budgets and for what was already paid out. Example:
    {"since": "2026-11-01", "until": "2026-11-30"}.
    """
    try:
        start, end, label = _period(args, ctx.services.timezone)
    except _PeriodError as exc:
        return _period_error(ctx, exc)
    totals = await coupon_totals_by_status(ctx.store, start=start, end=end)
    by_status = {k: {"count": count, "amount": amount} for k, (count, amount) in totals.items()}
    issued = sum(v["count"] for v in by_status.values())
    issued_amount = sum(v["amount"] for v in by_status.values())
    loc = ctx.locale
    lines = [
        ctx.say(
            f"쿠폰 집계 (발급일 기준 {label}): 발급 {issued:,}건, 합계 {format_krw(issued_amount, loc)}",
            f"Coupon totals (by issue date, {label}): {issued:,} issued, total {format_krw(issued_amount, loc)}",
        )
    ]
    for code, (ko, en) in COUPON_STATUS_LABELS.items():
        v = by_status.get(code, {"count": 0, "amount": 0})
        lines.append(
            ctx.say(
                f"- {code} {ko}: {v['count']:,}건, {format_krw(v['amount'], loc)}",
                f"- {code} ({en}): {v['count']:,}, {format_krw(v['amount'], loc)}",
            )
        )
    rules = ctx.services.coupon_rules
    lines.append(
        ctx.say(
            f"현재 보상 규칙: 쿠폰 1장 {format_krw(rules.min_amount, loc)}~{format_krw(rules.max_amount, loc)} "
            f"({format_krw(rules.amount_step, loc)} 단위), 대상 상태 {', '.join(rules.eligible_statuses)}, "
            f"유효기간 {rules.valid_days}일",
            f"Current rules: one coupon {format_krw(rules.min_amount, loc)}–{format_krw(rules.max_amount, loc)} "
            f"(steps of {format_krw(rules.amount_step, loc)}), eligible statuses "
            f"{', '.join(rules.eligible_statuses)}, valid {rules.valid_days} days",
        )
    )
    return ToolResult(
        ok=True,
        code=ResultCode.OK,
        message="\n".join(lines),
        data={"period": label, "by_status": by_status, "issued": issued, "issued_amount": issued_amount},
    )


OPS_READONLY_TOOLS: tuple[Tool, ...] = (order_stats, coupon_totals)


def ops_worker_registry(support_tools: ToolRegistry | None = None) -> ToolRegistry:
    """The worker's tools: `order_stats`, `coupon_totals`, plus the read-only support tools
    (`lookup_order`, `search_policy`) when `support_tools` has them. Never a tool that writes."""
    extra = [t for t in support_tools or () if t.name in WORKER_BASE_TOOLS and not t.side_effect]
    return ToolRegistry([*OPS_READONLY_TOOLS, *extra])
