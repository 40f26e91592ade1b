"""What a run tells its channel through the typed surface calls: its own id, then its reply."""

from __future__ import annotations

from sqlalchemy import select

from bot.conversations import Incoming
from bot.conversations.recording import RecordingSurface
from bot.store import Run
from tests.support.conversations import Harness

THREAD = "console:surface-calls"


async def test_each_run_tells_the_channel_its_own_id_before_its_reply(harness: Harness) -> None:
    harness.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"final": "ORD001은 배송 지연 상태입니다."},
    )
    surface = RecordingSurface()
    actor = await harness.conv.resolve_actor("9001", set())
    outcome = await harness.conv.handle(Incoming(THREAD, actor, "ORD001 어디쯤 왔어요?", ref=None), surface)
    assert outcome.kind == "answered"
    async with harness.app.store.session() as s:
        recorded = list((await s.execute(select(Run.run_id).where(Run.thread_id == THREAD))).scalars())
    assert surface.run_ids == recorded and len(recorded) == 1
    assert surface.statuses == set()  # the status message became the answer
    assert "배송 지연" in surface.text


async def test_a_refusal_is_a_notice_and_a_staff_command_reply_is_ephemeral(harness: Harness) -> None:
    surface = RecordingSurface()
    player = await harness.conv.resolve_actor("9001", set())
    await harness.conv.handle(Incoming(THREAD, player, "가" * 5000, ref=None), surface)
    assert len(surface.messages) == 1 and surface.replies == [] and surface.run_ids == []
    staff = await harness.conv.resolve_actor("42", {"Support Staff"})
    await harness.conv.handle(Incoming(THREAD, staff, "/audit 1", ref=None), surface)
    assert len(surface.replies) == 1 and len(surface.messages) == 1
