"""Saved replies in real headless Chromium: staff create one on the manage page (a refused variable
shows its error), then pick it in a taken-over conversation's reply box and see it sent, filled.
Screenshots in tests/web/output/staff/replies.png and saved-reply.png."""

from __future__ import annotations

from playwright.async_api import expect

from bot.store import Escalation
from tests.support.staff_console import open_console, shot

THREAD = "web:p100:main"


async def test_create_a_saved_reply_then_send_it_from_the_conversation(browser, web) -> None:
    conv = web.conversations
    await conv.memory.append(THREAD, {"role": "user", "content": "쿠폰 언제 와요?"}, kind="query")
    async with conv.store.session() as s, s.begin():
        s.add(Escalation(thread_id=THREAD, player_id="P100", summary="쿠폰 문의"))
    page = await open_console(browser, web)

    await page.get_by_role("link", name="저장 답변").click()
    await expect(page.locator("h1")).to_have_text("저장 답변")
    await page.locator("#new-name").fill("delay-coupon")
    await page.locator("#new-ko").fill("{player}님, {order} 지연 보상으로 {nick} 쿠폰을 드렸습니다.")
    await page.locator("#new-reply").get_by_role("button", name="저장").click()
    await expect(page.locator(".flash.bad")).to_contain_text("{nick}")
    await page.locator("#new-name").fill("delay-coupon")
    await page.locator("#new-ko").fill(
        "{player}님, {order} 지연 보상으로 쿠폰 {coupon_code}을(를) 드렸습니다."
    )
    await page.locator("#new-en").fill("Hi {player}, for the delay of {order} we sent coupon {coupon_code}.")
    await page.locator("#new-reply").get_by_role("button", name="저장").click()
    await expect(page.locator(".flash.ok")).to_be_visible()
    await expect(page.locator("#reply-delay-coupon")).to_contain_text("{coupon_code}")
    await shot(page, "replies")

    await page.goto(f"{web.url}/staff/conversations/{THREAD}")
    await page.get_by_role("button", name="운영진이 이어받기").click()
    await expect(page.locator(".state-handed_off")).to_be_visible()
    await page.locator("#saved-name").select_option("delay-coupon")
    await page.locator("#saved-values").fill("order=ORD001 coupon_code=ARCA-7K2Q")
    await page.get_by_role("button", name="저장된 답변 보내기").click()
    expected = "루나님, ORD001 지연 보상으로 쿠폰 ARCA-7K2Q을(를) 드렸습니다."
    await expect(page.locator(".flash.ok")).to_contain_text(expected)
    await expect(page.locator(".m-staff").last).to_contain_text(expected)
    await shot(page, "saved-reply")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_the_conversations_page_shows_an_sla_reminder(browser, web) -> None:
    from datetime import timedelta

    from bot.analytics.staff_response import SlaTargets
    from bot.desk.sla import send_reminders
    from bot.store import utcnow

    conv = web.conversations
    await conv.memory.append(THREAD, {"role": "user", "content": "환불해 주세요"}, kind="query")
    async with conv.store.session() as s, s.begin():
        s.add(
            Escalation(
                thread_id=THREAD,
                player_id="P100",
                summary="환불",
                created_at=utcnow() - timedelta(minutes=55),
            )
        )

    async def notify(kind: str, payload: dict) -> None:
        return None

    targets = SlaTargets(timedelta(hours=1), timedelta(hours=8), timedelta(minutes=10))
    assert await send_reminders(conv.store, notify, targets, utcnow())
    page = await open_console(browser, web)
    card = page.locator("#sla-reminders")
    await expect(card).to_contain_text("첫 응답 목표 임박")
    await card.get_by_role("link", name=THREAD).click()
    await expect(page.locator("h1")).to_have_text(THREAD)
    await page.go_back()
    await shot(page, "sla-reminders")
    assert page.errors == []  # type: ignore[attr-defined]
