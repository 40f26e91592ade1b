"""The staff web console shows the SLA reminders whichever process sent them (the audit is the source):
the conversations page lists each with its target and a link to the conversation, escaped."""

from __future__ import annotations

from datetime import timedelta

from bot.analytics.staff_response import SlaTargets
from bot.desk.sla import send_reminders
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
    assert f"escalation:{sent.escalation_id}" in page.text and "첫 응답 목표 임박" in page.text
    assert 'href="/staff/conversations/web%3Ap100%3Amain"' in page.text


async def test_no_reminder_no_card(web) -> None:
    staff = await sign_in(web)
    assert 'id="sla-reminders"' not in (await staff.client.get("/staff/conversations")).text
