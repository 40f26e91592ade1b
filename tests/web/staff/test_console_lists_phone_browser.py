"""The console's lists and conversation view on a phone, as a Korean staff member reads them (issue 51),
in headless Chromium: no page scrolls sideways at 390 px (a wide table scrolls inside its own box), the
guards' rules and the times read in Korean, and the English console reads in English. Screenshots in
tests/web/output/ (and in $REVIEW_SHOTS_DIR for a before/after review)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from bot.guards.fact_check import FACT_WITHHELD
from bot.incidents import parse_scope
from tests.support.browser import DESKTOP, PHONE
from tests.support.staff_console import THREAD, add_pending, open_console, shot
from tests.support.staff_console import a_conversation as _a_conversation

PAGES = {
    "conversations": "/staff/conversations",
    "conversation": f"/staff/conversations/{THREAD}",
    "audit": "/staff/audit",
    "ledger": "/staff/ledger",
    "approvals": "/staff/approvals",
    "incidents": "/staff/incidents",
    "gaps": "/staff/gaps",
}


async def _shot(page: Page, name: str) -> None:
    await shot(page, name)
    folder = os.environ.get("REVIEW_SHOTS_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        prefix = os.environ.get("REVIEW_SHOTS_PREFIX", "after")
        await page.screenshot(path=str(Path(folder) / f"{prefix}_{name}.png"), full_page=True)


async def _seed(web) -> None:
    await _a_conversation(web)
    conv = web.conversations
    await conv.store.audit(
        actor="player:P100",
        action=FACT_WITHHELD,
        thread_id=THREAD,
        target="r1",
        code="REPLACED",
        detail={
            "kind": "amount",
            "rule": "fact.unbacked",
            "removed": "보상으로 30,000원 쿠폰을 드릴게요.",
            "replacement": "이 부분은 정확한 정보를 확인한 후 안내해 드리겠습니다.",
            "mode": "enforce",
        },
    )
    await add_pending(web)
    await conv.store.incidents.open(
        title="택배사 파업으로 배송 지연",
        notice_ko="택배사 파업으로 배송이 2~3일 늦어집니다. 불편을 드려 죄송합니다.",
        notice_en="Deliveries are 2-3 days late because of a courier strike.",
        scope=parse_scope("status=delayed", zone=conv.services.timezone),
        actor="staff:4242",
        now=conv.clock(),
    )


@pytest.mark.slow
async def test_lists_and_the_conversation_fit_a_phone_and_read_in_korean(browser, web) -> None:
    await _seed(web)
    sideways = []
    for viewport, size in ((PHONE, "phone"), (DESKTOP, "desktop")):
        page = await open_console(browser, web, viewport=viewport)
        for name, path in PAGES.items():
            await page.goto(f"{web.url}{path}")
            await expect(page.locator("main, body").first).to_be_visible()
            await _shot(page, f"{size}_list_{name}")
            if size == "phone":  # the menu is one row that scrolls sideways, not five rows
                header = await page.locator("header.top").bounding_box()
                assert header is not None and header["height"] < 130, (name, header)
            overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            if overflow > 1:
                sideways.append(f"{name} by {overflow}px at {size} width")
        assert page.errors == []  # type: ignore[attr-defined]
    assert sideways == [], "pages that scroll sideways"

    page = await open_console(browser, web, viewport=PHONE)
    await page.goto(f"{web.url}/staff/conversations")
    last = page.locator("#conversation-rows tr").filter(has_text="운영진 미나입니다")
    await expect(last.locator(".role")).to_have_text("운영진")
    await page.goto(f"{web.url}/staff/conversations/{THREAD}")
    await expect(page.locator("#thread-place")).to_have_text("웹 위젯 · 플레이어 P100")
    mark = page.locator(".withheld li")
    await expect(mark).to_contain_text("근거 없는 금액·날짜·숫자")
    await expect(mark).not_to_contain_text("fact.unbacked")
    await page.goto(f"{web.url}/staff/audit")
    await expect(page.locator("table").first).to_contain_text("사실 확인: 문장 교체")


def test_a_thread_id_is_said_in_words_under_the_heading() -> None:
    from bot.staffroom.console.pages import thread_words

    assert thread_words("web:P100:main", "ko") == "웹 위젯 · 플레이어 P100"
    assert thread_words("web:anon-1f2e:main", "en") == "Web widget · anonymous visitor"
    assert thread_words("discord:123", "ko") == "Discord 채널"
    assert thread_words("dm:9", "en") == "Discord DM"
