"""An incident's report (at close, `/incident report`, `arca-bot incident report ID [--json]`, CSV):
what its bulk grant compensated against the budget, whom it excluded and why, and how support went
while it was open (conversations, how many the bot resolved, 👍/👎)."""

from __future__ import annotations

import csv
import io
from collections import Counter
from datetime import datetime
from typing import Any

from bot.analytics.stats import conversations
from bot.store import Store
from bot.store.feedback_votes import vote_tally
from bot.store.incident_grant import EXCLUSION_REASONS
from bot.store.incidents import IncidentRecord
from bot.vocabulary.dates import zoned_text


async def build_report(store: Store, incident: IncidentRecord, *, now: datetime) -> dict[str, Any]:
    """The report's figures as plain data (the `--json` form)."""
    end = incident.ended_at or now
    grants = await store.incidents.grant_summary(incident.id)
    excluded = await store.incidents.exclusions(incident.id)
    convs = [
        c
        for c in await conversations(store, since=incident.started_at, now=end)
        if incident.started_at <= c.started_at <= end
    ]
    votes = await vote_tally(store, since=incident.started_at, until=end)
    return {
        "id": incident.id,
        "title": incident.title,
        "status": incident.status,
        "started_at": incident.started_at.isoformat(),
        "ended_at": incident.ended_at.isoformat() if incident.ended_at else None,
        "notice_version": incident.notice_version,
        "compensation": {
            "per": incident.comp_per,
            "amount": incident.comp_amount,
            "state": incident.comp_state,
            "orders_compensated": grants.coupons,
            "players_compensated": grants.players,
            "krw_spent": grants.spent,
            "budget": incident.comp_budget,
        },
        "exclusions": dict(Counter(e.reason for e in excluded)),
        "excluded": [
            {"target": e.target, "order_id": e.order_id, "player_id": e.player_id, "reason": e.reason}
            for e in excluded
        ],
        "conversations": len(convs),
        "bot_resolved": sum(1 for c in convs if c.resolution == "bot_resolved"),
        "thumbs_up": int(votes[0]),
        "thumbs_down": int(votes[1]),
    }


def format_report(report: dict[str, Any], zone: str | None = None) -> str:
    """The report as staff read it in Discord and the console; times in `zone` (the service time zone)."""

    def when(stamp: str | None) -> str:
        return zoned_text(datetime.fromisoformat(stamp), "ko", zone, year=True) if stamp else "진행 중 / open"

    comp = report["compensation"]
    budget = f" / 예산 budget {comp['budget']:,}원" if comp["budget"] is not None else ""
    lines = [
        f"장애 #{report['id']} {report['title']} · {report['status']} · {when(report['started_at'])} → {when(report['ended_at'])}",
        f"- 보상 / compensated: 플레이어 {comp['players_compensated']:,}명 · 주문 {comp['orders_compensated']:,}건 · "
        f"{comp['krw_spent']:,}원{budget}",
    ]
    for reason, n in sorted(report["exclusions"].items(), key=lambda kv: -kv[1]):
        lines.append(f"- 제외 / excluded: {n:,} · {EXCLUSION_REASONS.get(reason, reason)}")
    lines.append(
        f"- 대화 / conversations: {report['conversations']:,} (봇 해결 / bot resolved {report['bot_resolved']:,})"
        f" · 👍 {report['thumbs_up']:,} · 👎 {report['thumbs_down']:,}"
    )
    return "\n".join(lines)


def report_csv(report: dict[str, Any]) -> str:
    """One line per figure, then one per excluded target with its reason (a spreadsheet's view)."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["kind", "key", "value"])
    comp = report["compensation"]
    for key in ("players_compensated", "orders_compensated", "krw_spent", "budget"):
        w.writerow(["compensation", key, comp[key] if comp[key] is not None else ""])
    for key in ("conversations", "bot_resolved", "thumbs_up", "thumbs_down"):
        w.writerow(["support", key, report[key]])
    for e in report["excluded"]:
        w.writerow(["excluded", e["target"], e["reason"]])
    return out.getvalue()
