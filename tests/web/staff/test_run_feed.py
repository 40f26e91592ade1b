"""`HubRunFeed`: a hub run's events in the page's shape; a web run is left to its own stream, and an answer
replaced after streaming (a broken stream) is shown from `done.answer`."""

from __future__ import annotations

from bot.channels.web.staff.run_feed import HubRunFeed
from bot.conversations.run_events import AnswerText, RunEnd, RunEvent
from bot.engine.events import ThinkingEvent


def test_a_web_run_is_left_to_the_web_stream_and_the_next_run_is_judged_again() -> None:
    web = [True]
    feed = HubRunFeed(lambda: web[0], clock=lambda: 1.0)
    assert feed.feed(RunEvent("r1", ThinkingEvent(status="start", iteration=1))) == []
    assert feed.feed(RunEvent("r1", RunEnd("답"))) == []
    web[0] = False
    out = feed.feed(RunEvent("r2", ThinkingEvent(status="start", iteration=1)))
    assert out == [
        {"id": "r2-1", "channel": "step", "payload": {"type": "thinking", "status": "start", "iteration": 1}}
    ]


def test_a_replaced_answer_is_shown_from_done() -> None:
    feed = HubRunFeed(lambda: False, clock=lambda: 2.0)
    first = feed.feed(RunEvent("r", AnswerText("배송이 ")))
    assert [(e["channel"], e["payload"]) for e in first] == [
        ("answer", {"status": "start"}),
        ("answer", {"status": "delta", "content": "배송이 "}),
    ]
    end = feed.feed(RunEvent("r", RunEnd("ORD001은 배송 지연 상태입니다.")))
    assert [e["channel"] for e in end] == ["answer", "done"]  # no delta: the text was replaced
    assert end[1]["payload"]["answer"] == "ORD001은 배송 지연 상태입니다."
    assert [e["id"] for e in first + end] == ["r-1", "r-2", "r-3", "r-4"]
    assert feed.run is None  # the next event starts a new run
