"""A staff reply reaches the player's open, idle widget in a real headless Chromium: between runs the widget
keeps one `GET /api/threads/<thread>/events?wait=` open, so the reply of staff who took the thread over
is drawn without a reload, exactly once; after the hand-back the bot answers the next message normally."""

from __future__ import annotations

import asyncio

from playwright.async_api import Request, expect

from tests.support.browser import DESKTOP, open_widget, send, shot
from tests.support.staff_console import sign_in

THREAD = "web:P100:main"
FIRST = "ORD001 주문은 배송 지연 중입니다. 불편을 드려 죄송합니다."
STAFF = "담당자 미나입니다. ORD001 건은 제가 직접 확인해 보상 쿠폰을 보내 드릴게요."
LAST = "쿠폰은 우편함에서 확인하실 수 있습니다."


async def test_a_staff_reply_appears_in_the_open_widget_once_then_the_bot_answers_again(browser, make_web):
    web = await make_web("native")
    web.script({"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": FIRST})
    page = await open_widget(browser, web, viewport=DESKTOP, fragment=f"token={web.token('P100')}&lang=ko")
    requests: list[Request] = []
    page.on("request", lambda r: requests.append(r) if "/api/threads/" in r.url else None)

    await send(page, "ORD001 언제 오나요?")
    bots = page.locator("li.msg.bot")
    await expect(bots.locator(".bubble")).to_have_text([FIRST])
    await expect(bots.nth(0).locator(".feedback")).to_have_count(1)  # answered
    await web.idle()
    await page.evaluate("window.notReloaded = true")

    staff = await sign_in(web)
    r = await staff.client.post(f"/staff/conversations/{THREAD}/handoff", data={"csrf": staff.csrf})
    assert r.status_code == 303
    await staff.client.post(f"/staff/conversations/{THREAD}/reply", data={"csrf": staff.csrf, "text": STAFF})
    # The web process's outbox poller (1 s) opens the reply's stream; the widget's wait receives it.
    await expect(bots.locator(".bubble")).to_have_text([FIRST, STAFF])
    await expect(bots.nth(1).locator(".footer")).to_have_text("운영진 Mina 님의 답변")
    await expect(bots.nth(1).locator(".feedback")).to_have_count(0)  # nothing to rate: no bot run
    await asyncio.sleep(1.5)  # the waits after it do not draw it again
    await expect(bots).to_have_count(2)
    assert await page.evaluate("window.notReloaded === true"), "the page was reloaded"
    assert [r.url for r in requests if r.url.endswith("/api/threads/main")] == [], "drawn from the history"
    waits = [r for r in requests if "/events?wait=25" in r.url]
    assert len(waits) >= 2, "one wait got the reply, the next one is open"
    assert all("last-event-id" not in {k.lower() for k in r.headers} for r in waits)
    await shot(page, "desktop_ko_staff_reply")

    await staff.client.post(f"/staff/conversations/{THREAD}/resume", data={"csrf": staff.csrf})
    assert not await web.conversations.is_paused(THREAD)
    web.script({"final": LAST})
    await send(page, "쿠폰은 어디서 봐요?")
    await expect(bots.locator(".bubble")).to_have_text([FIRST, STAFF, LAST])
    await expect(bots.nth(2).locator(".feedback")).to_have_count(1)
    await web.idle()
    await asyncio.sleep(1.5)
    await expect(bots).to_have_count(3)
    await expect(page.locator("li.msg.user .bubble")).to_have_text(
        ["ORD001 언제 오나요?", "쿠폰은 어디서 봐요?"]
    )
    await shot(page, "desktop_ko_staff_reply_handed_back")
    assert page.errors == []  # type: ignore[attr-defined]
    await page.context.close()  # no wait left open while the server stops
