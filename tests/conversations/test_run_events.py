"""`RunEvents`: a run's events reach the subscribers of its thread only, and a slow subscriber loses its
oldest events instead of blocking the run."""

from __future__ import annotations

import asyncio

from bot.conversations.run_events import RunEvents


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
