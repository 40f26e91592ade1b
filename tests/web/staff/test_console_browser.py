"""The staff console in real headless Chromium (Debian's `chromium`, Playwright): sign in through a
link, watch a conversation appear live, open it, take over and reply, approve a pending coupon (exactly
one ledger row changes), export CSV, at 1280 px and tablet width, by keyboard; screenshots of each page
go to tests/web/output/staff/ (git-ignored)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from playwright.async_api import expect
from sqlalchemy import select

from bot.store import Coupon
from tests.support.staff_console import TABLET, add_pending, open_console, shot


async def test_sign_in_watch_take_over_approve_and_export(browser, web) -> None:
    await add_pending(web, "ORD001")
    await add_pending(web, "ORD003", 40_000)
    conv = web.conversations
    thread = "web:p100:main"
    page = await open_console(browser, web)
    await expect(page.locator("h1")).to_have_text("실시간 대화")
    # A message arrives while the page is open: the list updates without a reload.
    await conv.memory.append(thread, {"role": "user", "content": "배송이 너무 늦어요"}, kind="query")
    row = page.locator(f'tr[data-thread="{thread}"]')
    await expect(row).to_contain_text("배송이 너무 늦어요")
    await shot(page, "conversations")

    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "lookup_order", "arguments": '{"order_id": "ORD001"}'},
    }
    await conv.memory.append(
        thread, {"role": "assistant", "content": None, "tool_calls": [call]}, kind="step"
    )
    await conv.memory.append(
        thread,
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "name": "lookup_order",
            "content": '{"code": "OK", "status": "delayed"}',
        },
        kind="observation",
    )
    await row.get_by_role("link").click()
    await expect(page.locator("h1")).to_have_text(thread)
    await expect(page.locator(".calls")).to_contain_text("lookup_order")
    await expect(page.locator(".m-tool")).to_contain_text('"code": "OK"')
    await page.get_by_role("button", name="운영진이 이어받기").click()
    await expect(page.locator(".state-handed_off")).to_be_visible()
    await page.get_by_label("답장").fill("상담원 미나입니다. 지금 확인해 드릴게요.")
    await page.get_by_role("button", name="보내기").click()
    await expect(page.locator(".m-staff")).to_contain_text("상담원 미나입니다")
    await shot(page, "conversation")
    assert await conv.is_paused(thread)
    await page.get_by_role("button", name="봇에게 돌려주기").click()
    await expect(page.get_by_role("button", name="운영진이 이어받기")).to_be_visible()

    await page.get_by_role("link", name="승인 대기").click()
    await expect(page.locator('tr[data-order="ORD001"]')).to_be_visible()
    await shot(page, "approvals")
    async with conv.store.session() as s:
        before = {c.id: c.status for c in (await s.execute(select(Coupon))).scalars()}
    await page.locator('tr[data-order="ORD001"]').get_by_role("button", name="승인").click()
    await expect(page.locator(".flash.ok")).to_be_visible()
    await expect(page.locator('tr[data-order="ORD001"]')).to_have_count(0)
    async with conv.store.session() as s:
        after = {c.id: c.status for c in (await s.execute(select(Coupon))).scalars()}
    changed = {i: (before[i], after[i]) for i in before if before[i] != after[i]}
    assert list(changed.values()) == [("pending", "active")] and after.keys() == before.keys()

    await page.get_by_role("link", name="쿠폰 원장").click()
    await expect(page.locator('tr[data-order="ORD001"]')).to_contain_text("active")
    await shot(page, "ledger")
    async with page.expect_download() as info:
        await page.locator("#ledger-csv").click()
    download = await info.value
    text = Path(await download.path()).read_text(encoding="utf-8-sig")
    rows = {r["order_id"]: r["status"] for r in csv.DictReader(io.StringIO(text))}
    assert rows == {"ORD001": "active", "ORD003": "pending"}

    await page.get_by_role("link", name="감사 기록").click()
    await expect(page.locator("tbody")).to_contain_text("staff./coupon approve")
    await shot(page, "audit")
    await page.get_by_role("link", name="대시보드").click()
    await expect(page.locator("svg.gauge").first).to_be_visible()
    await shot(page, "dashboard")
    await page.get_by_role("link", name="정책").click()
    await shot(page, "policies")
    await page.get_by_role("link", name="세션").click()
    await expect(page.locator("tbody")).to_contain_text("Mina")
    await shot(page, "sessions")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_tablet_english_and_keyboard(browser, web) -> None:
    await add_pending(web, "ORD003", 40_000)
    page = await open_console(browser, web, viewport=TABLET)
    await page.goto(f"{web.url}/staff/approvals?lang=en")
    await expect(page.locator("h1")).to_have_text("Coupons waiting for approval")
    # Keyboard only: the skip link first, then the navigation; a reject button is reachable by Tab.
    await page.keyboard.press("Tab")
    await expect(page.locator(".skip")).to_be_focused()
    for _ in range(30):
        await page.keyboard.press("Tab")
        focused = await page.evaluate("document.activeElement.textContent.trim()")
        if focused == "Reject":
            break
    else:
        raise AssertionError("the Reject button is not reachable by keyboard")
    await page.keyboard.press("Enter")
    await expect(page.locator(".flash.ok")).to_be_visible()
    await shot(page, "approvals-tablet-en")
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= TABLET["width"], f"the page scrolls sideways at tablet width ({width}px)"
    async with web.conversations.store.session() as s:
        assert (await s.execute(select(Coupon.status))).scalars().all() == ["rejected"]
    assert page.errors == []  # type: ignore[attr-defined]
