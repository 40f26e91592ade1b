"""A plain request for a person reaches `escalate_to_staff` through `Conversations` without any model call:
the harness's model factory fails the test if the bot asks for a model."""

from __future__ import annotations

from sqlalchemy import select

from bot.conversations import Incoming
from bot.store import AuditEntry, Escalation
from tests.support.conversations import Harness
from tests.support.surface import RecordingSurface

THREAD = "console:desk"


async def _say(h: Harness, text: str, surface: RecordingSurface, as_id: str = "9001"):
    actor = await h.conv.resolve_actor(as_id, set())
    return await h.conv.handle(Incoming(THREAD, actor, text, ref=text), surface)


async def test_korean_request_escalates_without_the_model(harness: Harness) -> None:
    seen: list[tuple[str, dict]] = []

    async def sink(kind: str, payload: dict) -> None:
        seen.append((kind, payload))

    harness.conv.staff_sinks.append(sink)
    surface = RecordingSurface()
    outcome = await _say(harness, "상담원 연결해 주세요", surface)

    assert outcome.kind == "escalated"
    assert harness.used == [], "no model was asked"
    assert "상담원 연결을 요청했습니다" in surface.text and "#1" in surface.text
    async with harness.app.store.session() as s:
        [row] = (await s.execute(select(Escalation))).scalars().all()
        audited = (await s.execute(select(AuditEntry).where(AuditEntry.action == "escalate"))).scalars().all()
    assert row.thread_id == THREAD and row.player_id == "P100" and "상담원 연결해 주세요" in row.summary
    assert [a.target for a in audited] == [f"escalation:{row.id}"]
    assert [k for k, _ in seen] == ["escalation"] and seen[0][1]["thread_id"] == THREAD
    history = [(m.role, m.content) for m in await harness.conv.memory.recent(THREAD)]
    assert history == [("user", "상담원 연결해 주세요"), ("assistant", surface.text)]


async def test_english_request_is_answered_in_english_even_unlinked(harness: Harness) -> None:
    surface = RecordingSurface()
    outcome = await _say(harness, "Can I speak to a human?", surface, as_id="77777")
    assert outcome.kind == "escalated" and harness.used == []
    assert surface.text.startswith("I've asked for a staff member (ticket #1)")


async def test_a_question_about_an_order_still_goes_to_the_model(harness: Harness) -> None:
    harness.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "ORD001은 배송 지연 상태입니다."}
    )
    outcome = await _say(harness, "ORD001 배송이 너무 늦어요", RecordingSurface())
    assert outcome.kind == "answered" and len(harness.used) == 1


async def test_out_of_hours_the_player_is_told_when_staff_return(
    seeded_store, policy_index, tmp_path
) -> None:
    from datetime import datetime

    from bot.app import build_app
    from bot.config import load_settings

    settings = load_settings(ARCA_DATA_DIR=str(tmp_path), ARCA_SUPPORT_HOURS="mon-fri 10:00-19:00")

    def no_model():
        raise AssertionError("the model was asked")

    app = await build_app(
        settings,
        llm_factory=no_model,
        store=seeded_store,
        policy_index=policy_index,
        clock=lambda: datetime.fromisoformat("2026-03-03T03:00:00+09:00"),
    )
    surface = RecordingSurface()
    actor = await app.conversations.resolve_actor("9001", set())
    outcome = await app.conversations.handle(Incoming(THREAD, actor, "상담원 연결해 주세요", ref=1), surface)
    assert outcome.kind == "escalated"
    assert surface.text.endswith("운영진은 3월 3일(화) 10:00(KST)부터 답변드립니다.")
