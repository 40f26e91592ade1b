"""SLA targets with a controlled clock: a reminder shortly before a first-response or resolution target
is missed, sent once (also across a restart: the audit remembers it) and not when staff already acted;
and the first-staff-response p50/p90 and SLA-met share in `arca-bot stats`."""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.analytics.stats import compute_stats, format_stats
from bot.desk.sla import due_reminders, send_reminders
from bot.store import AuditEntry, Escalation
from tests.support.desk import TARGETS

T0 = datetime.fromisoformat("2026-03-03T10:00:00+09:00")


async def escalate(store, thread: str, at: datetime) -> int:
    async with store.session() as s:
        row = Escalation(
            thread_id=thread, player_id="P100", summary="환불 문의", status="open", created_at=at
        )
        s.add(row)
        await s.commit()
        return row.id


async def staff_acts(store, thread: str, action: str, at: datetime) -> None:
    async with store.session() as s:
        s.add(AuditEntry(at=at, actor="staff:42", thread_id=thread, action=action))
        await s.commit()


async def test_a_reminder_comes_before_the_first_response_target_once(store) -> None:
    eid = await escalate(store, "discord:1", T0)
    posted: list[tuple[str, dict]] = []

    async def notify(kind: str, payload: dict) -> None:
        posted.append((kind, payload))

    assert await send_reminders(store, notify, TARGETS, T0 + timedelta(minutes=49)) == []
    [r] = await send_reminders(store, notify, TARGETS, T0 + timedelta(minutes=50))
    assert (r.escalation_id, r.target, r.due_at) == (eid, "first_response", T0 + timedelta(hours=1))
    assert posted == [
        (
            "sla",
            {
                "escalation_id": eid,
                "thread_id": "discord:1",
                "target": "first_response",
                "due_at": "2026-03-03T02:00:00+00:00",
                "minutes_left": 10,
            },
        )
    ]
    assert await send_reminders(store, notify, TARGETS, T0 + timedelta(minutes=55)) == [], "sent once"


async def test_no_first_response_reminder_once_staff_took_over_but_resolution_is_watched(store) -> None:
    await escalate(store, "discord:2", T0)
    await staff_acts(store, "discord:2", "handoff", T0 + timedelta(minutes=20))
    assert await due_reminders(store, TARGETS, T0 + timedelta(minutes=59)) == []
    [r] = await due_reminders(store, TARGETS, T0 + timedelta(hours=7, minutes=51))
    assert r.target == "resolution"
    await staff_acts(store, "discord:2", "resume", T0 + timedelta(hours=7, minutes=52))
    assert await due_reminders(store, TARGETS, T0 + timedelta(hours=7, minutes=53)) == []


async def test_a_staff_action_before_the_escalation_does_not_count(store) -> None:
    await staff_acts(store, "discord:3", "handoff", T0 - timedelta(minutes=5))
    await escalate(store, "discord:3", T0)
    assert [r.target for r in await due_reminders(store, TARGETS, T0 + timedelta(minutes=50))] == [
        "first_response"
    ]


async def test_stats_give_first_staff_response_percentiles_and_sla_met_share(store) -> None:
    for n, minutes in enumerate([10, 30, 90]):  # two within the hour, one late
        thread = f"discord:{10 + n}"
        await escalate(store, thread, T0)
        await staff_acts(store, thread, "console.reply", T0 + timedelta(minutes=minutes))
    await escalate(store, "discord:20", T0)  # never answered, past its target: missed
    await escalate(
        store, "discord:21", T0 + timedelta(hours=2, minutes=50)
    )  # still inside its hour: not judged
    now = T0 + timedelta(hours=3)
    stats = await compute_stats(store, days=7, now=now, sla=TARGETS)
    assert stats["first_staff_response_seconds_p50"] == 1800.0
    assert stats["first_staff_response_seconds_p90"] == 5400.0
    assert stats["sla_first_response_met_share"] == 0.5
    assert "first staff response p50 · p90: 1800s · 5400s · SLA met 50.0%" in format_stats(stats, 7)


def test_the_staff_channel_post_says_which_target_and_how_long_is_left() -> None:
    from bot.staffroom.discord_staff.channel import format_staff_notice

    post = format_staff_notice(
        "sla",
        {
            "escalation_id": 7,
            "thread_id": "discord:123",
            "target": "first_response",
            "due_at": "x",
            "minutes_left": 10,
        },
    )
    assert post.startswith("⏰ **SLA · Escalation #7** · <#123> · 첫 응답 / first response")
    assert "10분 남음 / 10 min left" in post
    late = format_staff_notice("sla", {"escalation_id": 7, "target": "resolution", "minutes_left": -5})
    assert "해결 / resolution" in late and "5분 지남 / 5 min overdue" in late
