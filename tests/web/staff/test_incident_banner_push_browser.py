"""The widget's incident banner is pushed, in real headless Chromium: staff declare an incident in the
staff web console, update its notice and close it, and a player's open widget shows each change within a
few seconds, without a reload and without its fallback poll (set to ten minutes here); with the stream
dropped (a proxy that does not pass it), the fallback poll still follows. Screenshots in
tests/web/output/incident-banner-pushed-*.png."""

from __future__ import annotations

from playwright.async_api import expect

from bot.players.web.widget import notices
from bot.store.incident_scope import IncidentScope
from tests.support.browser import open_widget
from tests.support.browser import shot as player_shot
from tests.support.staff_console import open_console

PHONE = {"width": 375, "height": 812}
WITHIN_MS = 5_000
"""The watch reads every second; a few seconds is the promise, far below the fallback poll."""


async def test_a_declaration_update_and_close_reach_the_open_widget_without_polling(
    browser, web, monkeypatch
) -> None:
    monkeypatch.setattr(notices, "POLL_SECONDS", 600.0)
    widget = await open_widget(browser, web, viewport=PHONE, fragment=f"token={web.token('P100')}&lang=ko")
    await expect(widget.locator("#input")).to_be_visible()
    await widget.evaluate("window.stayed = true")  # gone if the page reloads
    assert await widget.locator("#incidents").is_hidden()

    console = await open_console(browser, web)
    console.on("dialog", lambda dialog: dialog.accept())
    await console.get_by_role("link", name="장애", exact=True).click()
    form = console.locator("#declare")
    await form.get_by_label("제목").fill("서버 점검 연장")
    await form.get_by_label("플레이어 공지 (한국어)").fill("서버 점검이 14:00까지 연장됩니다.")
    await form.get_by_label("플레이어 공지 (영어)").fill("Maintenance is extended to 14:00.")
    await form.get_by_role("button", name="등록").click()
    await expect(console.locator(".flash.ok")).to_contain_text("등록했습니다")

    banner = widget.locator("#incidents .incident")
    await expect(banner).to_contain_text("서버 점검이 14:00까지 연장됩니다.", timeout=WITHIN_MS)
    await player_shot(widget, "incident-banner-pushed-phone")

    update = console.locator("#update")
    await update.locator("textarea[name=notice_ko]").fill("서버가 13:30에 열렸습니다.")
    await update.get_by_role("button", name="공지 갱신").click()
    await expect(banner).to_have_text("공지서버가 13:30에 열렸습니다.", timeout=WITHIN_MS)
    await widget.set_viewport_size({"width": 1280, "height": 860})
    await player_shot(widget, "incident-banner-pushed-desktop")

    await console.locator("#close").get_by_role("button", name="장애 종료").click()
    await expect(widget.locator("#incidents")).to_be_hidden(timeout=WITHIN_MS)
    assert await widget.evaluate("window.stayed") is True
    assert widget.errors == [] and console.errors == []  # type: ignore[attr-defined]


async def test_without_the_stream_the_banner_still_follows_by_polling(browser, web, monkeypatch) -> None:
    monkeypatch.setattr(notices, "POLL_SECONDS", 0.5)
    context = await browser.new_context(viewport=PHONE, locale="ko-KR")
    await context.route("**/api/notices/stream*", lambda route: route.abort())  # a proxy that drops it
    page = await context.new_page()
    await page.goto(f"{web.url}/#token={web.token('P100')}&lang=ko")
    await expect(page.locator("#input")).to_be_visible()
    store, now = web.conversations.store, web.conversations.clock()
    incident = await store.incidents.open(
        title="점검",
        notice_ko="서버 점검이 14:00까지 연장됩니다.",
        notice_en="",
        scope=IncidentScope("all"),
        actor="cli",
        now=now,
    )
    banner = page.locator("#incidents .incident")
    await expect(banner).to_contain_text("서버 점검이 14:00까지 연장됩니다.", timeout=WITHIN_MS)
    await store.incidents.close(incident.id, actor="cli", now=now)
    await expect(page.locator("#incidents")).to_be_hidden(timeout=WITHIN_MS)
    await context.close()
