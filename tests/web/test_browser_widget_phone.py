"""The widget on a phone, in real headless Chromium (issue 51): open incident notices take one line each
and open on a tap, one at a time, so they no longer cover ~40 % of the screen; the "상담원 연결" buttons
under answers given before a person took over are switched off. Screenshots in tests/web/output/ (and in
$REVIEW_SHOTS_DIR when set, for a before/after review)."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.async_api import Page, expect

from bot.store.incident_scope import IncidentScope
from tests.support.browser import open_widget, shot

PHONE = {"width": 375, "height": 740}
NOTICES = [
    "서버 점검이 14:00까지 연장됩니다. 점검 중에는 접속할 수 없으며, 연장된 시간만큼 보상 쿠폰을 드립니다. 불편을 드려 죄송합니다.",
    "일부 결제 건의 아이템 지급이 지연되고 있습니다. 결제하신 아이템은 순차적으로 지급되며, 중복 결제는 자동 취소됩니다.",
    "이벤트 보상 우편 발송이 늦어지고 있습니다. 오늘 안에 모두 발송하겠습니다.",
]


async def _shot(page: Page, name: str) -> None:
    await shot(page, name)
    folder = os.environ.get("REVIEW_SHOTS_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        prefix = os.environ.get("REVIEW_SHOTS_PREFIX", "after")
        await page.screenshot(path=str(Path(folder) / f"{prefix}_{name}.png"))


async def _three_incidents(web) -> None:
    store = web.conversations.store
    for n, text in enumerate(NOTICES):
        await store.incidents.open(
            title=f"장애 {n}",
            notice_ko=text,
            notice_en="Notice",
            scope=IncidentScope("all"),
            actor="test",
            now=web.conversations.clock(),
        )


async def test_notices_take_one_line_each_and_open_one_at_a_time_on_a_phone(browser, make_web) -> None:
    web = await make_web("native")
    await _three_incidents(web)
    page = await open_widget(browser, web, viewport=PHONE, fragment=f"token={web.token('P100')}&lang=ko")
    items = page.locator("#incidents .incident")
    await expect(items).to_have_count(3)
    await _shot(page, "widget_phone_notices_closed")
    box = await page.locator("#incidents").bounding_box()
    assert box is not None and box["height"] <= 0.2 * PHONE["height"], box
    for n in range(3):
        one = await items.nth(n).bounding_box()
        assert one is not None and one["height"] < 40, (n, one)  # one line each
        await expect(page.locator("#incidents")).to_contain_text(NOTICES[n][:20])

    await items.nth(1).locator("summary").click()
    await expect(items.nth(1)).to_have_attribute("open", "")
    opened = await items.nth(1).bounding_box()
    assert opened is not None and opened["height"] > 40  # the whole notice, on several lines
    await _shot(page, "widget_phone_notice_open")
    await items.nth(2).locator("summary").click()
    await expect(items.nth(2)).to_have_attribute("open", "")
    await expect(items.nth(1)).not_to_have_attribute("open", "")
    await expect(page.locator("#incidents .incident[open]")).to_have_count(1)
    assert page.errors == []  # type: ignore[attr-defined]


async def test_person_buttons_before_a_staff_reply_are_switched_off(browser, make_web) -> None:
    web = await make_web("native")
    thread = "web:P100:main"
    memory = web.conversations.memory
    await memory.append(thread, {"role": "user", "content": "환불하고 싶어요"}, run_id="r1", kind="query")
    await memory.append(
        thread, {"role": "assistant", "content": "환불 규정을 안내해 드릴게요."}, run_id="r1", kind="answer"
    )
    page = await open_widget(browser, web, viewport=PHONE, fragment=f"token={web.token('P100')}&lang=ko")
    first = page.locator(".msg.bot").nth(0)
    await expect(first.get_by_role("button", name="상담원 연결")).to_be_enabled()

    await memory.append(thread, {"role": "user", "content": "상담원 연결"}, kind="query")
    await memory.append(
        thread,
        {"role": "assistant", "name": "staff:4242", "content": "운영진 미나입니다. 환불 도와드릴게요."},
        kind="answer",
    )
    await memory.append(thread, {"role": "user", "content": "감사합니다"}, run_id="r2", kind="query")
    await memory.append(
        thread,
        {"role": "assistant", "content": "더 필요한 것이 있으면 말씀해 주세요."},
        run_id="r2",
        kind="answer",
    )
    await page.reload()
    answers = page.locator(".msg.bot")
    await expect(answers).to_have_count(3)
    before = answers.nth(0).get_by_role("button", name="상담원 연결")
    await expect(before).to_be_disabled()
    await expect(before).to_have_attribute("title", "운영진이 이미 응대하고 있습니다")
    later = answers.nth(2).get_by_role("button", name="상담원 연결")
    await expect(later).to_be_enabled()  # the bot answers again after the takeover: its button works
    await _shot(page, "widget_phone_person_taken")
    assert page.errors == []  # type: ignore[attr-defined]
