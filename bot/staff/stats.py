"""`/stats [days]` (DESIGN.md §8): the support figures for staff, ephemeral like every staff reply."""

from __future__ import annotations

from datetime import tzinfo
from typing import Any

from bot.analytics.stats import (
    DEFAULT_DAYS,
    DEFAULT_IDLE_MINUTES,
    DEFAULT_RESOLUTION_WINDOW_MINUTES,
    DEFAULT_TIMEZONE,
    compute_stats,
    format_stats,
)
from bot.staff.registry import Invocation, Param, StaffCommand, StaffReply

MAX_DAYS = 366


def stats_command(
    *,
    idle_minutes: int = DEFAULT_IDLE_MINUTES,
    resolution_window_minutes: int = DEFAULT_RESOLUTION_WINDOW_MINUTES,
    zone: tzinfo | str = DEFAULT_TIMEZONE,
) -> StaffCommand:
    """`/stats [days]` over conversations split after `idle_minutes` of silence, days in `zone`."""

    async def cmd_stats(inv: Invocation, args: dict[str, Any]) -> StaffReply:
        conv = inv.conversations
        days = min(int(args.get("days") or DEFAULT_DAYS), MAX_DAYS)
        stats = await compute_stats(
            conv.store,
            days=days,
            now=conv.clock(),
            idle_minutes=idle_minutes,
            resolution_window_minutes=resolution_window_minutes,
            zone=zone,
        )
        return StaffReply(format_stats(stats, days), data=stats)

    return StaffCommand(
        "stats",
        (Param("days", int, optional=True, minimum=1, help="look back this many days (default 7)"),),
        "지원 통계 / support statistics",
        cmd_stats,
    )
