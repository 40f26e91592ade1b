"""One open escalation per conversation: "상담원 연결" sent 8 times — one after another or all at once —
opens one escalation (so one SLA timer), and each repeat tells the player a person is already on the way;
once staff hand the thread back, a new request opens a new one."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from bot.conversations import Incoming
from bot.store import AuditEntry, Escalation
from tests.support.conversations import Harness
from tests.support.surface import RecordingSurface

THREAD = "console:desk"


async def _say(h: Harness, text: str, surface: RecordingSurface):
    actor = await h.conv.resolve_actor("9001", set())
    return await h.conv.handle(Incoming(THREAD, actor, text, ref=text), surface)


async def _escalations(h: Harness) -> list[int]:
    async with h.app.store.session() as s:
        return list((await s.execute(select(Escalation.id).order_by(Escalation.id))).scalars())


async def _asked_again(h: Harness) -> list[str | None]:
    async with h.app.store.session() as s:
        rows = await s.execute(select(AuditEntry.target).where(AuditEntry.action == "escalation.asked_again"))
        return list(rows.scalars())


async def test_eight_requests_in_a_row_open_one_escalation(harness: Harness) -> None:
    surfaces = [RecordingSurface() for _ in range(8)]
    for surface in surfaces:
        assert (await _say(harness, "상담원 연결", surface)).kind == "escalated"
    assert await _escalations(harness) == [1]
    assert "상담원 연결을 요청했습니다(접수 번호 #1)" in surfaces[0].text
    for surface in surfaces[1:]:
        assert "이미 상담원 연결을 요청하셨습니다(접수 번호 #1)" in surface.text
    assert await _asked_again(harness) == ["escalation:1"] * 7
    assert harness.used == [], "no model was asked"


async def test_eight_requests_at_once_open_one_escalation(harness: Harness) -> None:
    surfaces = [RecordingSurface() for _ in range(8)]
    await asyncio.gather(*(_say(harness, "상담원 연결해 주세요", s) for s in surfaces))
    assert await _escalations(harness) == [1]
    told = [s.text for s in surfaces]
    assert sum("상담원 연결을 요청했습니다(접수 번호 #1)" in t for t in told) == 1
    assert sum("이미 상담원 연결을 요청하셨습니다(접수 번호 #1)" in t for t in told) == 7


async def test_after_the_thread_is_handed_back_a_new_request_opens_a_new_escalation(harness: Harness) -> None:
    await _say(harness, "상담원 연결", RecordingSurface())
    await harness.conv.set_handoff(THREAD, True, by="staff:1")
    await harness.conv.set_handoff(THREAD, False, by="staff:1")  # audited `resume`: the person is done
    again = RecordingSurface()
    await _say(harness, "talk to a person", again)
    assert await _escalations(harness) == [1, 2]
    assert again.text.startswith("I've asked for a staff member (ticket #2)")
