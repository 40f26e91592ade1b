"""The report counts what happened while the incident was open: conversations (and how many the bot
resolved), 👍/👎, compensation against the budget and exclusions by reason — nothing from before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.incidents import parse_scope
from bot.incidents.report import build_report, format_report, report_csv
from bot.store import Feedback, Run, Store

T0 = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)


async def test_the_report_counts_conversations_and_votes_within_the_incident_only(
    seeded_store: Store,
) -> None:
    store = seeded_store
    incident = await store.incidents.open(
        title="점검 연장",
        notice_ko="점검이 연장됩니다.",
        notice_en="",
        scope=parse_scope("all"),
        actor="staff:42",
        now=T0,
    )
    runs = [
        ("before", T0 - timedelta(hours=2)),
        ("a", T0 + timedelta(minutes=5)),
        ("b", T0 + timedelta(minutes=9)),
    ]
    async with store.session() as s:
        for i, (who, at) in enumerate(runs):
            s.add(
                Run(
                    run_id=f"r{i}",
                    thread_id=f"discord:{who}",
                    player=f"discord:{who}",
                    started_at=at,
                    answered_at=at + timedelta(seconds=3),
                    locale="ko",
                )
            )
            s.add(
                Feedback(
                    run_id=f"r{i}",
                    thread_id=f"discord:{who}",
                    player=f"discord:{who}",
                    vote=1 if i != 2 else -1,
                    created_at=at,
                    updated_at=at + timedelta(seconds=10),
                )
            )
        await s.commit()
    closed = await store.incidents.close(incident.id, actor="staff:42", now=T0 + timedelta(hours=1))
    report = await build_report(store, closed, now=T0 + timedelta(hours=2))
    assert (report["conversations"], report["thumbs_up"], report["thumbs_down"]) == (2, 1, 1)
    assert report["compensation"]["krw_spent"] == 0 and report["exclusions"] == {}
    assert "대화 / conversations: 2" in format_report(report)
    assert "support,conversations,2" in report_csv(report)
