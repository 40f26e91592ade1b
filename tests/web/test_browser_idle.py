"""The widget between runs, in a real headless Chromium: a staff reply whose stream started and ended
while no wait was open (between two `?wait=25` requests) is still drawn, without a reload; a message the
player sends while a staff reply is still streaming gets its own run and its own bubble; and closing the
page leaves no wait open on the server."""

from __future__ import annotations

import asyncio

from playwright.async_api import Route, expect

from bot.players.web.sse.stream import RunStream
from bot.web_kit.sse.wire import answer_payload, done_payload
from tests.eventually import eventually
from tests.support.browser import CHROMIUM, DESKTOP, open_widget, send, shot
from tests.support.web import THREAD, reply_stream

FIRST = "ORD001 주문은 배송 지연 중입니다."
STAFF = "담당자 미나입니다. ORD001 건은 제가 직접 확인해 드릴게요."
ANSWER = "ORD004 마법사 코스튬은 배송 중입니다."

assert CHROMIUM


async def answered_and_waiting(browser, web):
    """The widget after its first answer, with its idle wait open on the server: (page, bot turns, streams)."""
    web.script({"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": FIRST})
    page = await open_widget(browser, web, viewport=DESKTOP, fragment=f"token={web.token('P100')}&lang=ko")
    await send(page, "ORD001 언제 오나요?")
    bots = page.locator("li.msg.bot")
    await expect(bots.locator(".bubble")).to_have_text([FIRST])
    await web.idle()
    streams = web.server.app.state.streams
    await eventually(lambda: streams.waiting(THREAD) == 1, what="the widget waits between runs")
    return page, bots, streams


async def test_a_staff_reply_between_two_waits_is_drawn(browser, make_web) -> None:
    web = await make_web("native")
    page, bots, streams = await answered_and_waiting(browser, web)

    # Hold the widget's next wait on its way, then end the open one: the reply's stream starts and ends
    # in the gap between the two waits, when nobody is waiting on the server.
    held: list[Route] = []
    gate = asyncio.Event()

    async def hold(route: Route) -> None:
        held.append(route)
        await gate.wait()
        await route.continue_()

    await page.route("**/events?wait=*", hold)
    await page.evaluate("window.notReloaded = true")
    streams.release_waiters()  # the open wait ends empty (as after its 25 s)
    await eventually(lambda: bool(held), what="the widget asks again")
    stream = reply_stream(web, STAFF)
    await eventually(lambda: stream.closed, what="the reply's stream ends")
    gate.set()

    await expect(bots.locator(".bubble")).to_have_text([FIRST, STAFF])
    await expect(bots.nth(1).locator(".footer")).to_have_text("운영진 Mina 님의 답변")
    await asyncio.sleep(1)  # drawn once
    await expect(bots).to_have_count(2)
    assert await page.evaluate("window.notReloaded === true"), "the page was reloaded"
    await shot(page, "desktop_ko_staff_reply_between_waits")
    assert page.errors == []  # type: ignore[attr-defined]
    await page.context.close()
    await eventually(lambda: streams.waiting(THREAD) == 0, what="closing the page ends its wait")


async def test_a_message_sent_while_a_staff_reply_streams_gets_its_own_run(browser, make_web) -> None:
    web = await make_web("native")
    page, bots, streams = await answered_and_waiting(browser, web)

    # A staff reply still streaming (its end held back).
    reply = RunStream(web.deps.new_id(), THREAD, clock=web.deps.clock)
    gate = asyncio.Event()

    async def feed() -> None:
        reply.publish("answer", answer_payload("start"))
        reply.publish("answer", answer_payload("delta", STAFF))
        await gate.wait()
        reply.publish("answer", answer_payload("done"))
        reply.publish("done", done_payload(STAFF, 0, {}, 0.0, None, by="staff", staff_name="미나"))

    streams.add(reply)
    reply.feed(asyncio.create_task(feed()), lambda: streams.close(reply))
    await expect(bots.locator(".bubble")).to_have_text([FIRST, STAFF])

    web.script({"tool": "lookup_order", "args": {"order_id": "ORD004"}}, {"final": ANSWER})
    await send(page, "ORD004도 확인해 주세요")
    await expect(bots.locator(".bubble")).to_have_text([FIRST, STAFF, ANSWER], timeout=10_000)
    await expect(bots.nth(2).locator(".tool .label")).to_have_text("주문 정보를 확인하고 있어요")
    await expect(bots.nth(2).locator(".feedback")).to_have_count(1)  # the run's answer is done
    await expect(page.locator("li.msg.user .note")).to_have_count(0)  # not "joined": a run of its own
    gate.set()
    await expect(bots.nth(1).locator(".footer")).to_have_text("운영진 미나 님의 답변")
    await expect(bots.locator(".bubble")).to_have_text([FIRST, STAFF, ANSWER])
    await web.idle()
    await shot(page, "desktop_ko_message_during_staff_reply")
    assert page.errors == []  # type: ignore[attr-defined]
    await page.context.close()
