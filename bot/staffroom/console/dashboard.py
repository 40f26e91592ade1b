"""The dashboard's figures: `arca-bot stats` for a chosen window, per day in the support time zone, and the
coupons issued per day against the daily caps of the coupon rules (`tools.coupon_rules.CouponRules`).

The caps are per player per calendar day (`daily_max_amount`, `daily_max_count`, in `ARCA_TIMEZONE`, the
same days the ledger counts), so each day is drawn as its busiest player's total against the cap line;
the day's total for everyone is a chart of its own.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.store import Store, coupon_views

WINDOWS = (7, 14, 30, 90)
"""The windows (days) the dashboard offers."""
DEFAULT_WINDOW = 7
ISSUED_STATUSES = ("active", "revoked")
"""Coupons that were issued (pending and rejected ones never were), as in `arca-bot stats`."""


def window_of(raw: str | None) -> int:
    """The requested window when it is one of `WINDOWS`, else the default."""
    try:
        days = int(raw or DEFAULT_WINDOW)
    except ValueError:
        return DEFAULT_WINDOW
    return days if days in WINDOWS else DEFAULT_WINDOW


@dataclass
class CouponDay:
    amount: int = 0
    count: int = 0
    by_player: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    """player → [amount, count] of that day."""

    @property
    def top_amount(self) -> int:
        return max((a for a, _ in self.by_player.values()), default=0)

    @property
    def top_count(self) -> int:
        return max((c for _, c in self.by_player.values()), default=0)


def day_labels(now: datetime, days: int, zone: ZoneInfo) -> list[str]:
    """Every calendar day of the window, oldest first (days without data are drawn as 0)."""
    today = now.astimezone(zone).date()
    return [(today - timedelta(days=i)).isoformat() for i in range(days - 1, -1, -1)]


async def coupon_days(
    store: Store, *, since: datetime, now: datetime, zone: ZoneInfo
) -> dict[str, CouponDay]:
    """Issued coupons per support-time-zone day: the total and each player's amount and count."""
    rows = await coupon_views.issued_between(store, since=since, until=now, statuses=ISSUED_STATUSES)
    out: dict[str, CouponDay] = defaultdict(CouponDay)
    for row in rows:
        day = out[row.created_at.astimezone(zone).date().isoformat()]
        day.amount += row.amount
        day.count += 1
        mine = day.by_player[row.player_id]
        mine[0] += row.amount
        mine[1] += 1
    return dict(out)


async def dashboard_context(
    conv: Any, days: int, zone: ZoneInfo, *, idle_minutes: int = 30, resolution_window_minutes: int = 60
) -> dict[str, Any]:
    """Everything `dashboard.html` draws for a window of `days` days ending now; conversations split
    and resolved with the configured gap and window, as `/stats` and `arca-bot stats` do."""
    from bot.analytics.stats import compute_stats, conversations

    windows = {"idle_minutes": idle_minutes, "resolution_window_minutes": resolution_window_minutes}
    now = conv.clock()
    since = now - timedelta(days=days)
    stats = await compute_stats(conv.store, days=days, now=now, zone=zone, **windows)
    labels = day_labels(now, days, zone)
    per_day: dict[str, list[int]] = {d: [0, 0] for d in labels}
    for c in await conversations(conv.store, since=since, now=now, **windows):
        day = per_day.setdefault(c.started_at.astimezone(zone).date().isoformat(), [0, 0])
        day[0] += 1
        day[1] += c.resolution == "bot_resolved"
    coupons = await coupon_days(conv.store, since=since, now=now, zone=zone)
    empty = CouponDay()
    rules = conv.services.coupon_rules
    return {
        "stats": stats,
        "days": days,
        "windows": WINDOWS,
        "top_sections": {row["section"]: row["count"] for row in stats["top_policy_sections"]},
        "per_day": {d: n for d, (n, _) in sorted(per_day.items())},
        "resolved_per_day": {d: round(100 * r / n) for d, (n, r) in sorted(per_day.items()) if n},
        "coupon_amount": {d: coupons.get(d, empty).amount for d in labels},
        "coupon_top_amount": {d: coupons.get(d, empty).top_amount for d in labels},
        "coupon_top_count": {d: coupons.get(d, empty).top_count for d in labels},
        "daily_max_amount": rules.daily_max_amount,
        "daily_max_count": rules.daily_max_count,
    }
