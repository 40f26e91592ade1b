"""The web surface's typed calls: the run id is passed in (not read from logging), the status line is not
an answer event, and an answer is streamed whatever its first letter."""

from __future__ import annotations

from bot.conversations.renderer import Renderer, status_text
from bot.engine.events import AnswerEvent, DoneEvent
from bot.guards.output import OutputGuard
from bot.persona import SUPPORT_SYSTEM_PROMPT
from bot.players.web.sse.stream import RunStream, WebSurface
from bot.vocabulary.log_context import current_log_context
from tools.base import Actor

THREAD = "web:P100:main"
HOURGLASS_ANSWER = "⏳ 모래시계 모양 아이템은 이벤트 상점에서 살 수 있어요."


async def _surface(seeded_store) -> tuple[RunStream, WebSurface]:
    guard = await OutputGuard.for_actor(
        seeded_store, Actor(discord_id=None, player_id="P100"), thread_id=THREAD, locale="ko"
    )
    stream = RunStream("s1", THREAD)
    return stream, WebSurface(stream, guard=guard, protected_texts=[SUPPORT_SYSTEM_PROMPT])


async def _reply(surface: WebSurface, run_id: str, answer: str) -> None:
    """One run as `Conversations` drives it: start, status line, loop done, answer streamed, finish."""
    renderer = Renderer(surface, edit_interval=surface.traits.edit_interval or 0.0)
    await surface.start_run(run_id)
    await renderer.status(status_text(None, "ko"))
    await surface.on_event(DoneEvent(answer=answer, iterations=1, usage={}, elapsed=0.1))
    await surface.on_event(AnswerEvent(channel="answer", status="start"))
    await renderer.append(answer[:10])
    await renderer.finish(answer)


async def test_the_run_id_on_the_stream_is_the_runs_own_without_any_logging_context(seeded_store):
    stream, surface = await _surface(seeded_store)
    assert current_log_context().get("run_id") is None
    await _reply(surface, "run-first", "주문을 확인했어요.")
    await _reply(surface, "run-second", "다른 질문도 확인했어요.")
    surface.close()
    done = [e.payload for e in stream.events if e.channel == "done"]
    assert [d["run_id"] for d in done] == ["run-first", "run-second"]
    assert [d["answer"] for d in done] == ["주문을 확인했어요.", "다른 질문도 확인했어요."]
    assert all(d["by"] == "bot" for d in done)


async def test_a_status_line_is_no_answer_event_and_an_answer_may_begin_with_the_hourglass(seeded_store):
    stream, surface = await _surface(seeded_store)
    await _reply(surface, "run-1", HOURGLASS_ANSWER)
    surface.close()
    answer = [e.payload for e in stream.events if e.channel == "answer"]
    assert answer[0] == {"status": "start"} and answer[-1] == {"status": "done"}
    shown = "".join(p["content"] for p in answer if p["status"] == "delta")
    assert shown == HOURGLASS_ANSWER  # the status line never reached the answer; the answer all did
    assert [e.payload["answer"] for e in stream.events if e.channel == "done"] == [HOURGLASS_ANSWER]


async def test_a_notice_is_a_whole_reply_no_run_produced(seeded_store):
    stream, surface = await _surface(seeded_store)
    await surface.notice("메시지가 너무 길어요.")
    surface.close()
    assert [e.channel for e in stream.events] == ["answer", "answer", "answer", "done"]
    done = stream.events[-1].payload
    assert done["answer"] == "메시지가 너무 길어요." and done["run_id"] is None and done["by"] == "notice"


async def test_notices_after_an_answer_are_replies_of_their_own(seeded_store):
    stream, surface = await _surface(seeded_store)
    await _reply(surface, "run-1", "주문을 확인했어요.")
    await surface.notice("답변을 멈췄어요.")
    await surface.notice("메시지가 너무 길어요.")
    surface.close()
    done = [(e.payload["answer"], e.payload["run_id"]) for e in stream.events if e.channel == "done"]
    assert done == [
        ("주문을 확인했어요.", "run-1"),
        ("답변을 멈췄어요.", None),
        ("메시지가 너무 길어요.", None),
    ]
