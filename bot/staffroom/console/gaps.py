"""The console's "questions without a policy" page (`/staff/gaps`, issue 24): the policy gaps of the last
days grouped by similar question (`bot.knowledge.gap_groups`), with counts, the last date, links to the
conversations and a CSV export (formula-safe, like the audit CSV)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from bot.knowledge.gap_groups import GapGroup, group_gaps
from bot.loop_share import to_background_thread
from bot.staffroom.console import queries
from bot.staffroom.console.pages import conversations_of, csv_response, render, require_user
from bot.store import utcnow
from bot.store.policy_gaps import policy_gaps

DEFAULT_DAYS, MAX_DAYS = 30, 366
SHOWN_THREADS = 5
CSV_HEADER = ["question", "count", "last_at", "kinds", "wordings", "conversations"]


def days_of(raw: str | None) -> int:
    try:
        return min(MAX_DAYS, max(1, int(raw or DEFAULT_DAYS)))
    except ValueError:
        return DEFAULT_DAYS


async def gap_groups(conv: Any, days: int) -> list[GapGroup]:
    """The gaps of the last `days` days, grouped with the policy index's embedder (off the event loop)."""
    gaps = await policy_gaps(conv.store, since=utcnow() - timedelta(days=days))
    embedder = getattr(conv.services.policy_search, "embedder", None)
    return await to_background_thread(group_gaps, gaps, embedder)


def csv_row(group: GapGroup) -> list[Any]:
    kinds = " ".join(f"{k}:{n}" for k, n in sorted(group.kinds.items()))
    return [
        group.question,
        group.count,
        group.last_at,
        kinds,
        " | ".join(group.wordings),
        " ".join(group.threads),
    ]


def add_gap_routes(router: APIRouter) -> None:
    @router.get("/gaps")
    async def gaps_page(request: Request) -> Response:
        user = await require_user(request)
        days = days_of(request.query_params.get("days"))
        groups = await gap_groups(conversations_of(request), days)
        if request.query_params.get("format") == "csv":
            return csv_response(queries.to_csv(CSV_HEADER, [csv_row(g) for g in groups]), "policy-gaps.csv")
        return render(request, "gaps.html", user, groups=groups, days=days, shown_threads=SHOWN_THREADS)
