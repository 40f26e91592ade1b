"""The dashboard: a window of 7, 14, 30 or 90 days, and the coupons issued per day (support time zone)
drawn against the per-player daily caps of the coupon rules, with the cap line and the days over it."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from playwright.async_api import expect

from bot.analytics.record import record_run
from bot.staffroom.console.charts import OVER_COLOR
from bot.store import Coupon
from tests.support.browser import DESKTOP
from tests.support.staff_console import TABLET, open_console, shot, sign_in

KST = "+09:00"


async def add_coupons(web) -> None:
    rows = [  # (order, player, amount, status, created in KST)
        ("ORD001", "P100", 20_000, "revoked", "2026-11-30T08:00"),
        ("ORD002", "P100", 40_000, "active", "2026-11-30T09:00"),  # P100: 60,000 today, over the 50,000 cap
        ("ORD003", "P200", 10_000, "active", "2026-11-30T09:30"),
        ("ORD003", "P200", 5_000, "revoked", "2026-11-20T12:00"),  # ten days ago: only in the 30-day window
        ("ORD004", "P100", 15_000, "pending", "2026-11-30T09:40"),  # never issued: not counted
        ("ORD001", "P100", 9_000, "active", "2026-11-29T23:30"),  # 11-29 in Seoul (11-29 14:30 UTC)
    ]
    async with web.conversations.store.session() as s, s.begin():
        for i, (order, player, amount, status, at) in enumerate(rows):
            s.add(
                Coupon(
                    code=f"T-{i}",
                    order_id=order,
                    player_id=player,
                    amount=amount,
                    status=status,
                    issued_by="bot",
                    reason="배송 지연",
                    idempotency_key=f"dash:{i}",
                    created_at=datetime.fromisoformat(at + KST),
                )
            )


def chart(html: str, card_id: str) -> str:
    return html.split(f'id="{card_id}"', 1)[1].split("</svg>", 1)[0]


def bar_values(svg: str) -> dict[str, str]:
    """label → the value text drawn after its bar."""
    return dict(
        re.findall(r'text-anchor="end">(\d{4}-\d\d-\d\d)</text><rect[^>]*/><text[^>]*>([^<]+)</text>', svg)
    )


async def test_coupons_per_day_against_the_daily_caps_in_a_chosen_window(web) -> None:
    await add_coupons(web)
    staff = await sign_in(web)
    rules = web.conversations.services.coupon_rules
    assert (rules.daily_max_amount, rules.daily_max_count) == (50_000, 3)

    page = (await staff.client.get("/staff/dashboard?days=30")).text
    assert '<option value="30" selected>최근 30일</option>' in page
    amount = chart(page, "cap-amount")
    assert '<g class="cap">' in amount and "1인 일일 한도 50,000원" in amount
    top = bar_values(amount)
    assert len(top) == 30 and list(top)[::29] == ["2026-11-01", "2026-11-30"]
    assert (top["2026-11-30"], top["2026-11-29"], top["2026-11-20"]) == ("60,000원", "9,000원", "5,000원")
    assert top["2026-11-21"] == "0원"
    assert amount.count(f'fill="{OVER_COLOR}"') == 1, "the one day over the cap is drawn in red"
    count = chart(page, "cap-count")
    assert "1인 일일 한도 3장" in count and bar_values(count)["2026-11-30"] == "2"
    totals = bar_values(page.split("<h2>일별 쿠폰 발급액 (전체)</h2>", 1)[1].split("</svg>", 1)[0])
    assert (totals["2026-11-30"], totals["2026-11-20"]) == ("70,000원", "5,000원")

    week = (await staff.client.get("/staff/dashboard?days=7&lang=en")).text
    assert '<option value="7" selected>last 7 days</option>' in week
    assert "daily cap 50,000 KRW per player" in week
    top = bar_values(chart(week, "cap-amount"))
    assert list(top) == [f"2026-11-{d}" for d in range(24, 31)] and "2026-11-20" not in top
    odd = (await staff.client.get("/staff/dashboard?days=13")).text  # not an offered window: the default
    assert '<option value="7" selected>' in odd and len(bar_values(chart(odd, "cap-amount"))) == 7


async def test_the_dashboard_in_the_browser_korean_desktop_and_english_tablet(browser, web) -> None:
    await add_coupons(web)
    for viewport, lang, cap in (
        (DESKTOP, "ko", "1인 일일 한도 50,000원"),
        (TABLET, "en", "daily cap 50,000 KRW"),
    ):
        page = await open_console(browser, web, viewport)
        await page.goto(f"{web.url}/staff/dashboard?lang={lang}")
        await page.locator("#days").select_option("30")  # the window, chosen from the list
        await page.locator("#days").press("Tab")
        await page.keyboard.press("Enter")  # the Apply button, by keyboard
        await expect(page).to_have_url(re.compile(r"days=30"))
        await expect(page.locator("#cap-amount .cap")).to_contain_text(cap)
        await expect(page.locator("#cap-amount rect")).to_have_count(30)
        await shot(page, f"dashboard-caps-{lang}")
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= viewport["width"], f"the dashboard scrolls sideways ({width}px)"
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()


async def test_the_dashboard_splits_conversations_with_the_configured_idle_gap(make_web) -> None:
    default, configured = await make_web("native"), await make_web("native", conversation_idle_minutes=180)
    assert default.conversations.store is configured.conversations.store
    now = default.conversations.clock()
    for run_id, hours_ago in (("r1", 5), ("r2", 3)):  # one player, two runs two hours apart
        start = now - timedelta(hours=hours_ago)
        assert await record_run(
            default.conversations.store,
            run_id=run_id,
            thread_id="discord:1",
            player="player:P100",
            started_at=start,
            answered_at=start + timedelta(seconds=4),
            locale="ko",
            outcomes=(),
        )

    async def conversations_shown(web) -> str:
        page = (await (await sign_in(web)).client.get("/staff/dashboard?days=7&lang=en")).text
        return re.search(r'Conversations</span><span class="value">(\d+)<', page).group(1)

    assert await conversations_shown(default) == "2"  # the default gap: 30 minutes
    # ARCA_CONVERSATION_IDLE_MINUTES=180: the same history is one conversation, as /stats counts it.
    assert await conversations_shown(configured) == "1"


async def test_the_dashboard_shows_first_staff_response_and_sla_met(web) -> None:
    from bot.store import AuditEntry, Escalation

    now = web.conversations.clock()
    async with web.conversations.store.session() as s, s.begin():
        for n, minutes in enumerate((20, 100)):  # one answered within the 60-minute target, one late
            at = now - timedelta(hours=3)
            s.add(Escalation(thread_id=f"discord:{n}", summary="환불", status="open", created_at=at))
            reply = at + timedelta(minutes=minutes)
            s.add(AuditEntry(at=reply, actor="staff:Mina", thread_id=f"discord:{n}", action="console.reply"))
    staff = await sign_in(web)
    page = (await staff.client.get("/staff/dashboard?days=7")).text
    assert "첫 운영진 응답 p50 · p90" in page and "20 · 100 분" in page
    assert re.search(r"SLA 충족</span><span class=\"value\">50%", page)


def test_chart_labels_get_the_room_they_need_and_keep_their_whole_text() -> None:
    """Issue 51: labels were cut at 28 characters and at the chart's left edge (a 170 px column)."""
    import re

    from bot.staffroom.console import charts

    long_ko = "환불 정책 § 3. 청약 철회가 제한되는 경우"
    svg = str(charts.bars({"DAILY_LIMIT_REACHED": 3, long_ko: 2}, title="t"))
    column = int(re.search(r'<rect x="(\d+)"', svg).group(1))
    assert column >= charts._text_width(long_ko) + 6  # the label fits left of the bars
    assert f"{long_ko}</text>" in svg and "DAILY_LIMIT_REACHED</text>" in svg
    width = int(re.search(r'viewBox="0 0 (\d+) ', svg).group(1))
    assert width - column >= 300  # the bars keep their room
