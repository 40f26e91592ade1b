"""The conversation list beyond one page, in real headless Chromium: the search box finds a thread, the
pager walks to the older ones, the live updates keep the page and the search (Korean, 1280 px and
tablet width); screenshots go to tests/web/output/staff/."""

from __future__ import annotations

from playwright.async_api import expect

from tests.support.browser import DESKTOP
from tests.support.staff_console import TABLET, open_console, shot


async def test_the_list_pages_searches_and_stays_live(browser, web) -> None:
    memory = web.conversations.memory
    for i in range(205):
        await memory.append(f"web:P{i:03d}x:main", {"role": "user", "content": f"질문 {i}"}, kind="query")
    for viewport, name in ((DESKTOP, "desktop"), (TABLET, "tablet")):
        page = await open_console(browser, web, viewport=viewport)
        rows = page.locator("#conversation-rows tr")
        await expect(rows).to_have_count(200)
        await page.get_by_role("link", name="다음").click()
        await expect(rows).to_have_count(5)
        await expect(page.locator('tr[data-thread="web:P000x:main"]')).to_be_visible()
        await shot(page, f"conversations-page-2-{name}")
        await page.get_by_role("searchbox").fill("P007x")
        await page.get_by_role("button", name="검색").click()
        await expect(rows).to_have_count(1)
        # A new message in the searched thread shows live; one outside the search does not join it.
        await memory.append("web:P007x:main", {"role": "user", "content": "아직인가요?"}, kind="query")
        await memory.append("web:P100x:main", {"role": "user", "content": "다른 대화"}, kind="query")
        await expect(rows.first).to_contain_text("아직인가요?")
        await page.wait_for_timeout(1_200)
        await expect(rows).to_have_count(1)
        await shot(page, f"conversations-search-{name}")
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()
