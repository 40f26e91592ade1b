"""What a player notices first, in a real headless Chromium: a message after staff took the conversation
over is acknowledged; staff replies (live and from the history) are drawn as staff replies with the staff
member's name; the raw step detail only in the operator's debug view; on a phone the guest subtitle and
the composer's hint are whole. Desktop and phone, Korean and English; screenshots in tests/web/output/."""

from __future__ import annotations

import asyncio

from playwright.async_api import expect

from bot.store.outbox import enqueue_reply
from tests.support.browser import DESKTOP, open_widget, send, shot
from tests.support.staff_console import sign_in

THREAD = "web:P100:main"
FIRST = "ORD001 주문은 배송 지연 중입니다. 불편을 드려 죄송합니다."
STAFF = "담당자 미나입니다. ORD001 건은 제가 직접 확인해 드릴게요."
PHONE = {"width": 375, "height": 740}

FITS = """el => {
  const style = getComputedStyle(el);
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return [ctx.measureText(el.placeholder).width, room];
}"""
"""The placeholder's drawn width and the room the textarea's one line gives it."""


async def test_a_takeover_is_acknowledged_and_staff_replies_carry_the_staff_name(browser, make_web):
    web = await make_web("native")
    web.script({"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": FIRST})
    token = web.token("P100")
    page = await open_widget(browser, web, viewport=DESKTOP, fragment=f"token={token}&lang=ko")
    await send(page, "ORD001 언제 오나요?")
    bots = page.locator("li.msg.bot")
    await expect(bots.nth(0).locator(".feedback")).to_have_count(1)
    await web.idle()

    staff = await sign_in(web, name="미나")
    await staff.client.post(f"/staff/conversations/{THREAD}/handoff", data={"csrf": staff.csrf})
    await send(page, "사람이랑 직접 얘기하고 싶어요")
    ack = bots.nth(1)
    await expect(ack.locator(".bubble")).to_have_text(
        "상담원이 곧 답변드릴게요. 메시지는 상담원에게 전달되었어요."
    )
    await expect(ack).not_to_have_class("msg bot staff")
    await expect(ack.locator(".feedback")).to_have_count(0)  # nothing to rate: the bot did not answer
    await expect(page.locator(".msg.bot .status:not(:empty)")).to_have_count(0)  # nothing left "working"

    await staff.client.post(f"/staff/conversations/{THREAD}/reply", data={"csrf": staff.csrf, "text": STAFF})
    live = bots.nth(2)
    await expect(live.locator(".bubble")).to_have_text(STAFF)
    await expect(live.locator(".footer")).to_have_text("상담원 미나 님의 답변")
    await expect(live).to_have_class("msg bot staff")
    await shot(page, "desktop_ko_takeover_ack_and_staff_reply")

    # From the history, after a reload: still a staff reply, with the name; the bot's answer is not.
    await page.reload()
    await expect(bots.locator(".bubble")).to_have_text([FIRST, STAFF])
    await expect(bots.nth(1)).to_have_class("msg bot staff")
    await expect(bots.nth(1).locator(".footer")).to_have_text("상담원 미나 님의 답변")
    await expect(bots.nth(0)).to_have_class("msg bot")
    await expect(bots.nth(0).locator(".feedback")).to_have_count(1)
    await shot(page, "desktop_ko_staff_reply_from_history")
    assert page.errors == []  # type: ignore[attr-defined]
    await page.context.close()

    phone = await open_widget(browser, web, viewport=PHONE, fragment=f"token={token}&lang=en")
    bots = phone.locator("li.msg.bot")
    await expect(bots.nth(1).locator(".footer")).to_have_text("Reply from 미나, our support team")
    await send(phone, "Is anyone there?")
    await expect(bots.nth(2).locator(".bubble")).to_have_text(
        "A member of our support team will reply shortly; your message has been passed on."
    )
    overflow = await phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, "the page scrolls sideways on a phone"
    await shot(phone, "phone_en_takeover_ack_and_history")
    assert phone.errors == []  # type: ignore[attr-defined]
    await phone.context.close()  # no wait left open while the server stops


async def test_the_step_detail_shows_only_in_the_debug_view_the_operator_allows(browser, make_web):
    script = ({"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": FIRST})
    player = await make_web("native")
    player.script(*script)
    page = await open_widget(
        browser, player, viewport=DESKTOP, fragment=f"token={player.token('P100')}&debug=1"
    )
    await send(page, "ORD001 언제 오나요?")
    await expect(page.locator(".msg.bot .feedback")).to_have_count(1)
    await expect(page.locator(".tool .label")).to_have_text("주문 정보를 확인하고 있어요")
    assert "lookup_order" not in await page.locator("#log").inner_text()  # #debug=1 alone opens nothing
    await page.context.close()

    operator = await make_web("native", debug_view=True)
    operator.script(*script)
    page = await open_widget(
        browser, operator, viewport=DESKTOP, fragment=f"token={operator.token('P100')}&debug=1"
    )
    await send(page, "ORD001 언제 오나요?")
    card = page.locator(".tool").first
    await expect(card.locator(".name")).to_have_text("lookup_order")
    await expect(page.locator(".msg.bot .footer")).to_contain_text("반복 2회")
    await card.locator("summary").click()
    await expect(card.locator("pre.args")).to_contain_text('"order_id": "ORD001"')
    await expect(card.locator("pre.observation")).to_contain_text("배송 지연")
    await shot(page, "desktop_ko_operator_debug_view")
    await page.context.close()


async def test_on_a_phone_the_guest_subtitle_and_the_composer_hint_are_whole(browser, make_web):
    web = await make_web("native")
    for lang, subtitle in (
        ("ko", "비회원 상담 (주문·쿠폰은 게임에서 로그인 후 이용)"),
        ("en", "Guest chat (sign in through the game for orders and coupons)"),
    ):
        for viewport in (PHONE, DESKTOP):
            page = await open_widget(browser, web, viewport=viewport, fragment=f"lang={lang}")
            who = page.locator("#who")
            await expect(who).to_have_text(subtitle)
            cut = await who.evaluate("el => el.scrollWidth - el.clientWidth")
            assert cut <= 0, f"{lang} {viewport}: the subtitle is cut off by {cut}px"
            drawn, room = await page.locator("#input").evaluate(FITS)
            assert drawn <= room, (
                f"{lang} {viewport}: the composer's hint needs {drawn:.0f}px of {room:.0f}px"
            )
            name = "phone" if viewport is PHONE else "desktop"
            await shot(page, f"{name}_{lang}_guest_header_and_composer")
            await page.context.close()


async def test_a_staff_reply_during_a_run_gets_its_own_signed_bubble(browser, make_web):
    web = await make_web("native")
    held = web.held_script({"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": FIRST})
    page = await open_widget(browser, web, viewport=PHONE, fragment=f"token={web.token('P100')}&lang=ko")
    await send(page, "ORD001 언제 오나요?")
    await asyncio.wait_for(held.holding.wait(), 10)
    # Queued as another process's staff reply would be (a console reply needs a takeover, which stops
    # the run): the outbox posts it on the run's open stream.
    await enqueue_reply(web.conversations.store, THREAD, "미나", STAFF)
    reply = page.locator("li.msg.bot.staff")
    await expect(reply.locator(".bubble")).to_have_text(STAFF)  # while the run still holds
    await expect(reply.locator(".footer")).to_have_text("상담원 미나 님의 답변")
    held.release()
    answer = page.locator("li.msg.bot:not(.staff)")
    await expect(answer.locator(".bubble")).to_have_text(FIRST)
    await expect(answer.locator(".feedback")).to_have_count(1)
    await expect(reply.locator(".bubble")).to_have_text(STAFF)  # the run's answer did not land in it
    await shot(page, "phone_ko_staff_reply_during_a_run")
    assert page.errors == []  # type: ignore[attr-defined]
    await page.context.close()
