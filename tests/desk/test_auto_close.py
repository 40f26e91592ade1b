"""Auto-close with a controlled clock: an escalated conversation the player left silent for the idle time is
closed once with a notice in their language asking for 👍 / 👎; a player who wrote recently, or a thread staff
handed back, is left alone; a closed escalation gets no more SLA reminders."""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.analytics.staff_response import SlaTargets
from bot.desk.auto_close import close_idle
from bot.desk.sla import due_reminders
from bot.store import AuditEntry, Escalation, ThreadMessage

T0 = datetime.fromisoformat("2026-03-03T10:00:00+09:00")
IDLE = timedelta(hours=48)


async def escalated(store, thread: str, *, said: str, said_at: datetime) -> None:
    async with store.session() as s:
        s.add(ThreadMessage(thread_id=thread, role="user", content=said, created_at=said_at))
        s.add(Escalation(thread_id=thread, summary="s", status="open", created_at=T0))
        await s.commit()


async def test_a_silent_escalated_conversation_is_closed_once_with_a_notice(store) -> None:
    await escalated(store, "discord:1", said="상담원 연결해 주세요", said_at=T0)
    await escalated(store, "discord:2", said="talk to a person", said_at=T0)
    told: list[tuple[str, str]] = []

    async def tell(thread_id: str, text: str) -> None:
        told.append((thread_id, text))

    assert await close_idle(store, tell, T0 + IDLE - timedelta(minutes=1), IDLE) == []
    assert await close_idle(store, tell, T0 + IDLE, IDLE) == [1, 2]
    assert told[0][0] == "discord:1" and told[0][1].startswith("답장이 없어 이 상담을 종료합니다.")
    assert "👍 / 👎" in told[0][1]
    assert told[1][1].startswith("As we have not heard back") and "👍 / 👎" in told[1][1]
    assert await close_idle(store, tell, T0 + 2 * IDLE, IDLE) == [], "closed once"
    assert await due_reminders(store, SlaTargets(), T0 + IDLE) == [], "no target left to miss"


async def test_a_player_who_wrote_lately_or_a_handed_back_thread_stays_open(store) -> None:
    await escalated(store, "discord:3", said="아직 기다리고 있어요", said_at=T0 + timedelta(hours=30))
    await escalated(store, "discord:4", said="상담원", said_at=T0)
    async with store.session() as s:
        s.add(AuditEntry(at=T0 + timedelta(hours=1), actor="staff:1", thread_id="discord:4", action="resume"))
        await s.commit()

    async def tell(thread_id: str, text: str) -> None:
        raise AssertionError(f"{thread_id} was closed")

    assert await close_idle(store, tell, T0 + IDLE + timedelta(hours=1), IDLE) == []
