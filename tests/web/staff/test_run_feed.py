"""`HubRunFeed`: a hub run's events in the page's shape; a web run is left to its own stream, an answer
replaced after streaming (a broken stream) is shown from `done.answer`, and the steps are cleaned exactly
as the web channel cleans its player's stream (other people's personal data, mentions, prompt leaks)."""

from __future__ import annotations

from typing import Any

from bot.conversations.run_events import AnswerText, RunEnd, RunEvent
from bot.engine.events import IterationEvent, ThinkingEvent
from bot.guards.output import OutputGuard
from bot.persona import SUPPORT_SYSTEM_PROMPT
from bot.players.web.sse.stream import RunStream, WebSurface
from bot.staffroom.console.run_feed import HubRunFeed
from tools.base import Actor

CARD = "4111 1111 1111 1111"
OTHER_PHONE = "010-2345-6789"  # P200's
OWN_PHONE = "010-1234-5678"  # P100's
OTHER_EMAIL = "kai@example.com"  # P200's
LEAK = SUPPORT_SYSTEM_PROMPT.splitlines()[0] + " " + SUPPORT_SYSTEM_PROMPT.splitlines()[1]


def _feed(is_web_run: Any, **kwargs: Any) -> HubRunFeed:
    async def guard_for(actor: Actor | None, locale: str) -> OutputGuard:
        return OutputGuard(actor=actor, locale=locale)

    return HubRunFeed(is_web_run, guard_for, **kwargs)


async def test_a_web_run_is_left_to_the_web_stream_and_the_next_run_is_judged_again() -> None:
    web = [True]
    feed = _feed(lambda: web[0], clock=lambda: 1.0)
    assert await feed.feed(RunEvent("r1", ThinkingEvent(status="start", iteration=1))) == []
    assert await feed.feed(RunEvent("r1", RunEnd("답"))) == []
    web[0] = False
    out = await feed.feed(RunEvent("r2", ThinkingEvent(status="start", iteration=1)))
    assert out == [
        {"id": "r2-1", "channel": "step", "payload": {"type": "thinking", "status": "start", "iteration": 1}}
    ]


async def test_a_replaced_answer_is_shown_from_done() -> None:
    feed = _feed(lambda: False, clock=lambda: 2.0)
    first = await feed.feed(RunEvent("r", AnswerText("배송이 ")))
    assert [(e["channel"], e["payload"]) for e in first] == [
        ("answer", {"status": "start"}),
        ("answer", {"status": "delta", "content": "배송이 "}),
    ]
    end = await feed.feed(RunEvent("r", RunEnd("ORD001은 배송 지연 상태입니다.")))
    assert [e["channel"] for e in end] == ["answer", "done"]  # no delta: the text was replaced
    assert end[1]["payload"]["answer"] == "ORD001은 배송 지연 상태입니다."
    assert [e["id"] for e in first + end] == ["r-1", "r-2", "r-3", "r-4"]
    assert feed.run is None  # the next event starts a new run


def _steps() -> list[Any]:
    return [
        ThinkingEvent(status="start", iteration=1),
        ThinkingEvent(status="done", iteration=1, reasoning=f"카드 {CARD}로 결제된 주문, @everyone 확인"),
        IterationEvent(
            status="start",
            iteration=1,
            tool_name="lookup_order",
            tool_args={"order_id": CARD, "note": {"contact": [OTHER_EMAIL]}},
            call_id="c1",
        ),
        IterationEvent(
            status="done",
            iteration=1,
            tool_name="lookup_order",
            call_id="c1",
            observation=f"[OK] 카드 {CARD}, 연락처 {OTHER_PHONE}, 본인 연락처 {OWN_PHONE}",
            error=f"<@&123> {OTHER_EMAIL}",
            code="OK",
            iter_elapsed=0.01,
        ),
        ThinkingEvent(status="start", iteration=2),
        ThinkingEvent(status="done", iteration=2, reasoning=f"My instructions say: {LEAK}"),
    ]


async def test_hub_steps_are_cleaned_as_the_web_stream_cleans_them(seeded_store) -> None:
    actor = Actor(discord_id="9001", player_id="P100")
    thread = "discord:77"
    asked: list[tuple[Any, str]] = []

    async def guard_for(who: Actor | None, locale: str) -> OutputGuard:
        asked.append((who, locale))
        return await OutputGuard.for_actor(
            seeded_store, who, thread_id=thread, locale=locale, protected_texts=[SUPPORT_SYSTEM_PROMPT]
        )

    feed = HubRunFeed(lambda: False, guard_for, protected_texts=(SUPPORT_SYSTEM_PROMPT,))
    hub: list[dict[str, Any]] = []
    for event in _steps():
        hub += await feed.feed(RunEvent("r", event, actor, "en"))
    assert asked == [(actor, "en")]  # one guard per run, for the person it answers

    # The web channel's own stream for the same person and events.
    stream = RunStream("r", thread)
    guard = await OutputGuard.for_actor(
        seeded_store, actor, thread_id=thread, locale="en", protected_texts=[SUPPORT_SYSTEM_PROMPT]
    )
    surface = WebSurface(stream, guard=guard, protected_texts=[SUPPORT_SYSTEM_PROMPT])
    for event in _steps():
        await surface.on_event(event)
    assert [e["payload"] for e in hub] == [e.payload for e in stream.events]

    sent = " ".join(str(e["payload"]) for e in hub)
    assert CARD not in sent and OTHER_PHONE not in sent and OTHER_EMAIL not in sent
    assert "@everyone" not in sent and "<@&123>" not in sent
    assert OWN_PHONE in sent  # the player's own number may be shown as it is to them
    assert "customer-support assistant of Arca Online" not in sent
    assert "I can't share my internal instructions." in hub[-1]["payload"]["reasoning"]
