"""The staff web console shows the SLA reminders whichever process sent them (the audit is the source):
the conversations page lists each with its target, the escalation's number and player (not
`escalation:1`), its due time in the Korean date format, whether it is missed (지남) or due (임박), and a
link to the conversation, escaped; more than it lists are counted, not dropped (issue 51)."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

from bot.analytics.staff_response import SlaTargets
from bot.desk.sla import send_reminders
from bot.staffroom.console.sla import SHOWN_AT_MOST
from bot.store import Escalation, utcnow
from tests.support.staff_console import sign_in

TARGETS = SlaTargets(timedelta(hours=1), timedelta(hours=8), timedelta(minutes=10))


async def test_the_conversations_page_lists_recent_sla_reminders(web) -> None:
    store = web.conversations.store
    now = utcnow()
    async with store.session() as s, s.begin():
        s.add(
            Escalation(
                thread_id="web:p100:main",
                player_id="P100",
                summary="환불",
                created_at=now - timedelta(minutes=55),
            )
        )

    async def notify(kind: str, payload: dict) -> None:
        return None

    [sent] = await send_reminders(store, notify, TARGETS, now)
    staff = await sign_in(web)

    page = await staff.client.get("/staff/conversations")

    assert 'id="sla-reminders"' in page.text
    assert f"운영진 호출 #{sent.escalation_id} · P100" in page.text and "첫 응답 목표 임박" in page.text
    assert f"escalation:{sent.escalation_id}" not in page.text
    due = (now + timedelta(minutes=5)).astimezone(ZoneInfo("Asia/Seoul"))
    assert f"기한 {due.month}월 {due.day}일(" in page.text and f"{due:%H:%M}" in page.text
    assert "목표 지남" not in page.text
    assert 'href="/staff/conversations/web%3Ap100%3Amain"' in page.text


async def test_a_missed_target_says_missed_and_extra_reminders_are_counted(web) -> None:
    store = web.conversations.store
    now = utcnow()
    async with store.session() as s, s.begin():
        for n in range(SHOWN_AT_MOST + 3):
            s.add(
                Escalation(
                    thread_id=f"web:p{n}:main",
                    player_id=f"P{n:03d}",
                    summary="환불",
                    created_at=now - timedelta(minutes=90),
                )
            )

    async def notify(kind: str, payload: dict) -> None:
        return None

    sent = await send_reminders(store, notify, TARGETS, now)
    assert len(sent) == SHOWN_AT_MOST + 3
    staff = await sign_in(web)
    page = (await staff.client.get("/staff/conversations")).text
    assert "첫 응답 목표 지남" in page and "첫 응답 목표 임박" not in page
    assert "이 밖에 3건이 더 있습니다" in page
    english = (await staff.client.get("/staff/conversations?lang=en")).text
    assert "First response target missed" in english and "3 more" in english


async def test_no_reminder_no_card(web) -> None:
    staff = await sign_in(web)
    assert 'id="sla-reminders"' not in (await staff.client.get("/staff/conversations")).text
