"""The staff console in Korean (and English) in a real headless Chromium, at phone and desktop widths: the
"대기" pill and the "종료" button keep their syllables on one line; an approval says why it waits (the
rule and the figures, or untrusted input); a lost approval race says who approved it and when; a
rejection says the request was rejected, not that a coupon was revoked. Screenshots in
tests/web/output/staff/."""

from __future__ import annotations

from playwright.async_api import Page, expect

from tests.support.browser import DESKTOP
from tests.support.staff_console import open_console, shot, sign_in
from tools.base import Actor
from tools.coupon_rules import CouponRules
from tools.ledger import issue_for_player

PHONE = {"width": 375, "height": 740}
LUNA = Actor(discord_id="9001", player_id="P100", display_name="루나")
RIN = Actor(discord_id="9002", player_id="P200", display_name="린")

ONE_LINE = """el => {
  const style = getComputedStyle(el);
  const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.5;
  const inner = el.getBoundingClientRect().height - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom)
    - parseFloat(style.borderTopWidth) - parseFloat(style.borderBottomWidth);
  return inner < line * 1.5;
}"""
"""True when the element's text takes one line (a word broken one syllable per line takes several)."""


async def two_pending(web) -> None:
    """ORD001 over the approval threshold; ORD003 asked in a message the input guard marked untrusted."""
    store = web.conversations.store
    rules = CouponRules(approval_threshold=30_000, max_amount=50_000)
    now = web.conversations.clock()
    over = await issue_for_player(
        store,
        rules,
        actor=LUNA,
        order_id="ORD001",
        amount=50_000,
        idempotency_key="t1",
        thread_id="web:P100:main",
        now=now,
    )
    flagged = await issue_for_player(
        store,
        rules,
        actor=RIN,
        order_id="ORD003",
        amount=10_000,
        idempotency_key="t2",
        thread_id="web:P200:main",
        now=now,
        review=True,
    )
    assert over.code == flagged.code == "PENDING_APPROVAL"


async def one_line(page: Page, selector: str) -> None:
    target = page.locator(selector).first
    await expect(target).to_be_visible()
    assert await target.evaluate(ONE_LINE), f"{selector} wraps: {await target.inner_text()!r}"


async def test_pills_and_buttons_keep_korean_words_whole_at_phone_width(browser, web) -> None:
    conv = web.conversations
    for n in range(3):
        text = "배송이 너무 늦어요. 언제 받을 수 있는지 알려 주세요. 주문 번호는 ORD001입니다. " * 3
        await conv.memory.append(f"web:P100:thread{n}", {"role": "user", "content": text}, kind="query")
    await sign_in(web, "Jun", "777")  # a second session, so the sessions page lists two 종료 buttons
    for viewport, name in ((PHONE, "phone"), (DESKTOP, "desktop")):
        page = await open_console(browser, web, viewport=viewport)
        await expect(page.locator(".state-waiting").first).to_have_text("대기")
        await one_line(page, ".state-waiting")
        await shot(page, f"{name}_ko_conversations")
        await page.goto(f"{web.url}/staff/sessions")
        await expect(page.get_by_role("button", name="종료").first).to_be_visible()
        await one_line(page, "button.danger")
        overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name}: the sessions page scrolls sideways"
        await shot(page, f"{name}_ko_sessions")
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()


async def test_approvals_say_why_and_a_lost_race_says_who_approved_and_when(browser, web) -> None:
    await two_pending(web)
    page = await open_console(browser, web, viewport=PHONE)
    await page.goto(f"{web.url}/staff/approvals")
    over, flagged = page.locator('tr[data-order="ORD001"]'), page.locator('tr[data-order="ORD003"]')
    await expect(over.locator(".why")).to_have_text("승인 기준 30,000원 초과: 요청 50,000원")
    await expect(flagged.locator(".why")).to_contain_text("입력이 신뢰할 수 없음으로 표시됨")
    await one_line(page, 'tr[data-order="ORD001"] button.primary')
    await shot(page, "phone_ko_approvals_why")

    # Another staff member approves ORD001 first; this page still shows its button.
    jun = await sign_in(web, "Jun", "777")
    r = await jun.client.post("/staff/approvals/ORD001/approve", data={"csrf": jun.csrf})
    assert r.status_code == 303 and "ok=1" in r.headers["location"]
    await over.get_by_role("button", name="승인").click()
    flash = page.locator(".flash")
    await expect(flash).to_contain_text("주문 ORD001의 쿠폰은 이미 Jun 님이 ")
    await expect(flash).to_contain_text("승인했습니다: 50,000원 쿠폰 ARCA-")
    assert "승인 대기 중인 쿠폰이 없습니다" not in await flash.inner_text()
    await shot(page, "phone_ko_approval_race_lost")

    # Rejecting the flagged request: it was never issued, so nothing is "revoked", no code, no expiry.
    await page.locator('tr[data-order="ORD003"]').get_by_role("button", name="거절").click()
    await expect(page.locator(".flash.ok")).to_contain_text(
        "주문 ORD003의 승인 대기 쿠폰 요청(10,000원)을 거절했습니다. 쿠폰은 발급되지 않았습니다."
    )
    for never_issued in ("취소했습니다", "ARCA-", "만료"):
        assert never_issued not in await page.locator(".flash").inner_text()
    await shot(page, "phone_ko_rejected")
    assert page.errors == []  # type: ignore[attr-defined]
    await page.context.close()


async def test_approvals_in_english_on_a_desktop(browser, web) -> None:
    await two_pending(web)
    page = await open_console(browser, web, viewport=DESKTOP)
    await page.goto(f"{web.url}/staff/approvals?lang=en")
    await expect(page.locator('tr[data-order="ORD001"] .why')).to_have_text(
        "Over the approval threshold of 30,000 KRW: asked 50,000 KRW"
    )
    await expect(page.locator('tr[data-order="ORD003"] .why')).to_contain_text("Input marked untrusted")
    await shot(page, "desktop_en_approvals_why")
    await page.context.close()
