"""`/stats [days]` (DESIGN.md §8): the support figures (`bot.analytics`) for staff, ephemeral like every staff reply."""

from __future__ import annotations

from typing import Any

from bot.analytics.stats import (
    DEFAULT_DAYS,
    DEFAULT_IDLE_MINUTES,
    DEFAULT_RESOLUTION_WINDOW_MINUTES,
    compute_stats,
    format_stats,
)
from bot.staff.registry import Invocation, Param, StaffCommand, StaffReply

MAX_DAYS = 366


async def cmd_stats(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    conv = inv.conversations
    days = min(int(args.get("days") or DEFAULT_DAYS), MAX_DAYS)
    options = getattr(conv, "stats_options", None) or {}
    stats = await compute_stats(
        conv.store,
        days=days,
        now=conv.clock(),
        idle_minutes=options.get("idle_minutes", DEFAULT_IDLE_MINUTES),
        resolution_window_minutes=options.get("resolution_window_minutes", DEFAULT_RESOLUTION_WINDOW_MINUTES),
    )
    return StaffReply(format_stats(stats, days), data=stats)


def stats_command() -> StaffCommand:
    return StaffCommand(
        "stats",
        (Param("days", int, optional=True, minimum=1, help="look back this many days (default 7)"),),
        "지원 통계 / support statistics",
        cmd_stats,
    )
