"""`RunEvents`: a run's events reach the subscribers of its thread only, a slow subscriber loses its
oldest events instead of blocking the run, and every run ends for its watchers with one `RunEnd` (the
answer, or the apology or stop notice when it failed or was stopped)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from bot.conversations import Incoming
from bot.conversations.messages import STOPPED_TEXT, failure_text
from bot.conversations.run_events import RunEnd, RunEvents
from tests.eventually import WITHIN
from tests.support.conversations import Harness
from tests.support.surface import RecordingSurface

THREAD = "discord:555"


async def test_subscribers_get_the_events_of_their_thread_only_in_order() -> None:
    hub = RunEvents()
    hub.publish("discord:1", "before anyone listens")  # nobody subscribed: nothing kept
    async with hub.subscribe("discord:1") as one, hub.subscribe("discord:1") as again:
        async with hub.subscribe("console:x") as other:
            assert hub.subscribers("discord:1") == 2 and hub.subscribers("console:x") == 1
            for item in ("a", "b", "c"):
                hub.publish("discord:1", item)
            hub.publish("console:x", "z")
            assert [await one.get() for _ in range(3)] == ["a", "b", "c"]
            assert [await again.get() for _ in range(3)] == ["a", "b", "c"]
            assert await other.get() == "z"
            assert one.queue.empty() and again.queue.empty() and other.queue.empty()
        assert hub.subscribers("console:x") == 0
        hub.publish("console:x", "nobody")
        hub.publish("discord:1", "d")
        assert await asyncio.wait_for(one.get(), 1) == "d"
    assert hub.subscribers("discord:1") == 0
    assert hub._subscribers == {}


async def test_iterating_a_subscription_waits_for_the_next_event() -> None:
    hub = RunEvents()
    got: list[str] = []

    async def watch() -> None:
        async with hub.subscribe("discord:2") as events:
            async for item in events:
                got.append(item)
                if item == "end":
                    return

    task = asyncio.create_task(watch())
    await asyncio.sleep(0)  # the watcher subscribes, then waits for an event
    assert hub.subscribers("discord:2") == 1
    hub.publish("discord:2", "tool")
    hub.publish("discord:2", "end")
    await asyncio.wait_for(task, 1)
    assert got == ["tool", "end"]
    assert hub.subscribers("discord:2") == 0  # leaving the loop unsubscribed


async def test_a_slow_subscriber_drops_its_oldest_events_and_never_blocks_a_publish() -> None:
    hub = RunEvents(queue_size=3)
    async with hub.subscribe("discord:3") as slow:
        for i in range(10):
            hub.publish("discord:3", i)  # synchronous: it cannot wait for the reader
        assert slow.queue.qsize() == 3 and slow.dropped == 7
        assert [await slow.get() for _ in range(3)] == [7, 8, 9]


async def _items_of(hub: RunEvents, thread: str, say: Any) -> list[Any]:
    """What a watcher of `thread` gets while `say()` runs."""
    async with hub.subscribe(thread) as events:
        await say()
        items = []
        while not events.queue.empty():
            items.append(events.queue.get_nowait())
    return items


def _ends(items: list[Any]) -> list[tuple[str, str]]:
    return [(i.run_id, i.event.answer) for i in items if isinstance(i.event, RunEnd)]


async def test_every_run_ends_with_one_run_end_naming_whom_it_answers(harness: Harness) -> None:
    conv = harness.conv
    actor = await conv.resolve_actor("9001", set())
    harness.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "ORD001은 배송 지연입니다."}
    )
    surface = RecordingSurface()
    items = await _items_of(
        conv.run_events, THREAD, lambda: conv.handle(Incoming(THREAD, actor, "ORD001 어디?"), surface)
    )
    assert _ends(items) == [(items[0].run_id, "ORD001은 배송 지연입니다.")]
    assert {(i.actor, i.locale) for i in items} == {(actor, "ko")}


async def test_a_run_that_raises_still_ends_for_its_watchers(harness: Harness) -> None:
    conv = harness.conv

    def unreachable() -> Any:
        raise RuntimeError("model endpoint unavailable")

    conv.deps = replace(conv.deps, llm_factory=unreachable)
    actor = await conv.resolve_actor("9001", set())
    outcome: list[Any] = []

    async def say() -> None:
        outcome.append(await conv.handle(Incoming(THREAD, actor, "ORD001 어디?"), RecordingSurface()))

    items = await _items_of(conv.run_events, THREAD, say)
    assert outcome[0].kind == "failed"
    assert _ends(items) == [(items[-1].run_id, failure_text("ko"))]
    assert items[-1].actor == actor


async def test_a_stopped_run_ends_with_the_stop_notice(harness: Harness) -> None:
    conv = harness.conv
    actor = await conv.resolve_actor("9001", set())
    harness.script({"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "never"})

    async def stop_at_the_tool(event: Any) -> None:
        if event.type == "iteration" and event.status == "start":
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(conv.stop(THREAD)))
            await asyncio.sleep(WITHIN)  # cancelled by the stop; a stop that never lands lets the run answer

    outcome: list[Any] = []

    async def say() -> None:
        with harness.hooked(stop_at_the_tool):
            outcome.append(await conv.handle(Incoming(THREAD, actor, "ORD001 확인"), RecordingSurface()))

    items = await _items_of(conv.run_events, THREAD, say)
    assert outcome[0].kind == "stopped"
    assert _ends(items) == [(items[0].run_id, STOPPED_TEXT)]


def _guard_preparations() -> list[asyncio.Task[Any]]:
    """The output guard's preparation tasks still pending (`run._answer` makes it ready beside the model's
    first words)."""
    return [t for t in asyncio.all_tasks() if "prepare_guard" in repr(t.get_coro()) and not t.done()]


async def test_a_run_stopped_while_its_answer_starts_ends_with_the_stop_notice_and_no_guard_left(
    harness: Harness,
) -> None:
    conv = harness.conv
    actor = await conv.resolve_actor("9001", set())
    harness.script({"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "ORD001 배송 지연"})
    pending: list[list[asyncio.Task[Any]]] = []

    async def stop_as_the_answer_starts(event: Any) -> None:
        if event.type == "answer" and event.channel == "answer" and event.status == "start":
            pending.append(_guard_preparations())
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(conv.stop(THREAD)))
            await asyncio.sleep(WITHIN)  # cancelled by the stop

    outcome: list[Any] = []
    surface = RecordingSurface()

    async def say() -> None:
        with harness.hooked(stop_as_the_answer_starts):
            outcome.append(await conv.handle(Incoming(THREAD, actor, "ORD001 확인"), surface))

    items = await _items_of(conv.run_events, THREAD, say)
    assert outcome[0].kind == "stopped"
    assert _ends(items) == [(items[0].run_id, STOPPED_TEXT)]
    assert len(pending[0]) == 1  # the guard was being made while the answer started
    await asyncio.sleep(0)
    assert _guard_preparations() == []  # … and the stop cancelled it
    assert not any("ORD001 배송 지연" in text for text in surface.messages.values())


async def test_a_guard_that_cannot_be_made_fails_the_run_before_any_answer_text(
    harness: Harness, monkeypatch
) -> None:
    conv = harness.conv
    actor = await conv.resolve_actor("9001", set())
    harness.script({"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "ORD001 배송 지연"})

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the guard's history read failed")

    monkeypatch.setattr("bot.conversations.run.OutputGuard.for_actor", broken)
    outcome: list[Any] = []
    surface = RecordingSurface()

    async def say() -> None:
        outcome.append(await conv.handle(Incoming(THREAD, actor, "ORD001 확인"), surface))

    items = await _items_of(conv.run_events, THREAD, say)
    assert outcome[0].kind == "failed"
    assert _ends(items) == [(items[0].run_id, failure_text("ko"))]
    assert not any("ORD001 배송 지연" in text for text in surface.messages.values())
    assert _guard_preparations() == []
