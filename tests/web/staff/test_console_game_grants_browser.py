"""The console's game grants page (`/staff/grants`) in real headless Chromium: pending, delivered and dead
jobs with attempts and the backend's reason (shown as text, never as markup), a Retry button that puts a
dead letter back (CSRF-checked, audited); without a session or a CSRF token nothing changes. Screenshot
in tests/web/output/staff/grants.png."""

from __future__ import annotations

from datetime import timedelta

from playwright.async_api import expect
from sqlalchemy import select

from bot.store import AuditEntry, utcnow
from bot.store.game_deliveries import Outcome
from tests.support.context import NOW, STAFF
from tests.support.staff_console import open_console, shot, sign_in
from tools.coupon_rules import CouponRules
from tools.ledger import staff_issue

REASON = '<img src=x onerror="alert(1)"> player suspended'


async def _one_dead_one_pending(web) -> tuple[str, str]:
    store = web.conversations.store
    store.game_deliveries.enabled = True
    codes = []
    for i, order in enumerate(("ORD001", "ORD003")):
        result = await staff_issue(
            store,
            CouponRules(),
            actor=STAFF,
            order_id=order,
            amount=5000,
            reason="사과",
            idempotency_key=f"g{i}",
            now=NOW,
        )
        codes.append(result.data["coupon"]["code"])
    now = utcnow()
    (first,) = await store.game_deliveries.lease("test", now=now, lease=timedelta(seconds=30), limit=1)
    await store.game_deliveries.record("test", [Outcome(first.id, "dead", f"422 {REASON}")], now=now)
    return codes[0], codes[1]


async def test_staff_see_deliveries_and_retry_a_dead_letter(browser, web) -> None:
    dead, pending = await _one_dead_one_pending(web)
    page = await open_console(browser, web)
    await page.goto(f"{web.url}/staff/grants")
    row = page.locator(f'tr[data-grant="{dead}"]')
    await expect(row).to_contain_text("실패")
    await expect(row.locator("td.why")).to_have_text(f"422 {REASON}")  # the markup is text
    assert await page.locator("#grants img").count() == 0
    await expect(page.locator(f'tr[data-grant="{pending}"]')).to_contain_text("대기")
    await expect(page.locator("#grant-counts")).to_contain_text("실패 1")
    await shot(page, "grants")
    await row.get_by_role("button", name="다시 보내기").click()
    await expect(page.locator(f'tr[data-grant="{dead}"]')).to_contain_text("대기")
    await expect(page.locator("#grant-counts")).to_contain_text("실패 0")
    assert page.errors == []  # type: ignore[attr-defined]
    async with web.conversations.store.session() as s:
        audit = (
            (await s.execute(select(AuditEntry).where(AuditEntry.action == "delivery.retry"))).scalars().all()
        )
    assert [(a.target, a.code, a.actor) for a in audit] == [(dead, "OK", audit[0].actor)]
    assert audit[0].actor.startswith("staff:")


async def test_the_grants_page_and_retry_need_a_session_and_the_csrf_token(web) -> None:
    dead, _pending = await _one_dead_one_pending(web)
    anonymous = web.client()
    assert (await anonymous.get("/staff/grants")).status_code == 401
    assert (await anonymous.post(f"/staff/grants/{dead}/retry")).status_code == 401
    staff = await sign_in(web)
    assert (await staff.client.post(f"/staff/grants/{dead}/retry", data={"csrf": "wrong"})).status_code == 403
    assert [j.state for j in await web.conversations.store.game_deliveries.list(state="dead")] == ["dead"]
    answer = await staff.client.post(f"/staff/grants/{dead}/retry", data={"csrf": staff.csrf})
    assert answer.status_code == 303
    assert await web.conversations.store.game_deliveries.list(state="dead") == []
