"""Incidents in real headless Chromium, in Korean: staff declare an incident (orders by status), preview
a compensation, approve it, watch the progress and read the report (CSV formula-safe); a run another
process drives shows live on the page; a player's widget shows the notice as a banner, updated and
removed. Screenshots (desktop and 375 px) in tests/web/output/staff/incident-*.png and
tests/web/output/incident-banner-*.png."""

from __future__ import annotations

import asyncio
import csv
import io
from collections import Counter
from pathlib import Path

from playwright.async_api import expect
from sqlalchemy import select

from bot.incidents import run_compensation
from bot.players.web.widget import notices
from bot.store import Coupon
from bot.store.incident_grant import Plan
from bot.store.incident_scope import IncidentScope
from tests.support.browser import open_widget
from tests.support.browser import shot as player_shot
from tests.support.staff_console import open_console, shot

PHONE = {"width": 375, "height": 812}
HOSTILE = '<img src=x onerror="window.pwned=1">'


async def test_declare_preview_approve_progress_and_report_as_staff(browser, web) -> None:
    store = web.conversations.store
    page = await open_console(browser, web)
    await page.get_by_role("link", name="장애", exact=True).click()
    await expect(page.locator("h1")).to_have_text("장애")
    form = page.locator("#declare")
    await form.get_by_label("제목").fill("택배사 파업")
    await form.get_by_label("플레이어 공지 (한국어)").fill(
        f"택배사 파업으로 배송이 3일 늦어집니다. {HOSTILE}"
    )
    await form.get_by_label("플레이어 공지 (영어)").fill("Deliveries are 3 days late.")
    await expect(form.locator('[data-scope="orders"]')).to_be_hidden()
    await form.get_by_label("조건에 맞는 주문").check()
    await form.get_by_label("배송 지연").check()
    await form.get_by_label("주문 취소").check()
    await shot(page, "incident-declare")
    await form.get_by_role("button", name="등록").click()

    await expect(page.locator(".flash.ok")).to_contain_text("등록했습니다")
    await expect(page.locator("h1")).to_contain_text("택배사 파업")
    await expect(page.locator("#update textarea[name=notice_ko]")).to_have_value(
        f"택배사 파업으로 배송이 3일 늦어집니다. {HOSTILE}"
    )
    plan = page.locator("#plan")
    await plan.get_by_label("금액 (원)").fill("5000")
    await plan.get_by_label("예산 (선택)").fill("10000")
    await plan.get_by_role("button", name="미리보기").click()
    preview = page.locator("#preview")
    await expect(preview.locator("#pv-orders")).to_have_text("2")  # 6 delayed orders, a budget for 2
    await expect(preview.locator("#pv-total")).to_have_text("10,000원")
    await expect(preview.locator('[data-reason="order_not_eligible"]')).to_contain_text("보상 대상이 아닌")
    await expect(preview.locator('[data-reason="budget_reached"] strong')).to_have_text("4")
    await expect(preview.locator('[data-reason="order_not_eligible"] strong')).to_have_text("5")
    await expect(preview.locator("#pv-overrides")).to_contain_text("플레이어 1인당 하루 쿠폰 수")
    await expect(preview.locator('#pv-overrides [title="daily_max_count"]')).to_have_count(1)
    await shot(page, "incident-preview")

    await preview.get_by_role("button", name="승인").click()
    await expect(page.locator("#progress-state")).to_have_text("발급 완료")
    await expect(page.locator("#progress-bar")).to_have_attribute("value", "11")  # 6 delayed, 5 cancelled
    await expect(page.locator('#progress [data-k="issued"]')).to_have_text("2")
    await expect(page.locator('#progress [data-k="spent"]')).to_have_text("10,000")
    await shot(page, "incident-progress")

    incident = (await store.incidents.list())[0]
    async with store.session() as s:
        keys = (
            (
                await s.execute(
                    select(Coupon.idempotency_key).where(
                        Coupon.idempotency_key.like(f"incident:{incident.id}:%")
                    )
                )
            )
            .scalars()
            .all()
        )
    assert len(keys) == 2

    await page.get_by_role("button", name="장애 종료").click()
    await expect(page.locator("#incident-status")).to_have_text("종료")
    await expect(page.locator(".notice-text").first).to_contain_text(HOSTILE)  # shown as text
    assert await page.evaluate("window.pwned") is None

    await page.get_by_role("link", name="보고서").click()
    await expect(page.locator('#report-figures [data-k="orders"]')).to_have_text("2")
    await expect(page.locator("#report-exclusions")).to_contain_text("예산 소진")
    await shot(page, "incident-report")
    async with page.expect_download() as info:
        await page.locator("#report-csv").click()
    text = Path(await (await info.value).path()).read_text(encoding="utf-8-sig")
    rows = list(csv.reader(io.StringIO(text)))
    assert ["compensation", "krw_spent", "10000"] in rows
    assert Counter(r[2] for r in rows if r[0] == "excluded") == {"order_not_eligible": 5, "budget_reached": 4}

    await page.set_viewport_size(PHONE)
    await shot(page, "incident-report-phone")
    await page.goto(f"{web.url}/staff/incidents/{incident.id}")
    await shot(page, "incident-phone")
    await page.goto(f"{web.url}/staff/incidents")
    await expect(page.locator("#incidents tbody tr")).to_have_count(1)
    await expect(page.locator("#incidents tbody tr")).to_contain_text("5,000원 / 주문 · 발급 완료")
    await shot(page, "incident-list-phone")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_the_progress_of_a_run_elsewhere_shows_live(browser, web) -> None:
    store = web.conversations.store
    incident = await store.incidents.open(
        title="점검 연장",
        notice_ko="점검이 2시간 연장됩니다.",
        notice_en="",
        scope=IncidentScope("all"),
        actor="cli",
        now=web.conversations.clock(),
    )
    # Approved as the CLI or another process would: nothing in the web process issues it.
    await store.incidents.set_plan(
        incident.id, Plan(incident.id, "order", 1000, None, None, 30), state="approved", actor="cli"
    )
    page = await open_console(browser, web)
    await page.goto(f"{web.url}/staff/incidents/{incident.id}")
    await expect(page.locator('#progress [data-k="done"]')).to_have_text("0")
    total = int((await page.locator('#progress [data-k="total"]').inner_text()).replace(",", ""))
    await expect(page.get_by_role("button", name="이어서 발급")).to_be_visible()
    await page.evaluate("window.stayed = true")

    async def paced(_step) -> None:
        await asyncio.sleep(0.3)

    await run_compensation(
        store, incident.id, actor="cli", clock=web.conversations.clock, batch_size=4, progress=paced
    )
    await expect(page.locator("#progress-state")).to_have_text("발급 완료")
    await expect(page.locator('#progress [data-k="done"]')).to_have_text(f"{total:,}")
    assert await page.evaluate("window.stayed") is True  # drawn live, not by a reload
    await shot(page, "incident-progress-elsewhere")


async def test_the_widget_banner_shows_the_notice_in_scope_updates_and_goes(
    browser,
    web,
    monkeypatch,
) -> None:
    monkeypatch.setattr(notices, "POLL_SECONDS", 0.5)
    store, now = web.conversations.store, web.conversations.clock()
    everyone = await store.incidents.open(
        title="서버 점검 연장",
        notice_ko=f"서버 점검이 14:00까지 연장됩니다. {HOSTILE}",
        notice_en="Maintenance is extended to 14:00.",
        scope=IncidentScope("all"),
        actor="cli",
        now=now,
    )
    await store.incidents.open(  # P200 only: never shown to P100
        title="P200",
        notice_ko="P200 전용 공지",
        notice_en="",
        scope=IncidentScope("players", player_ids=("P200",)),
        actor="cli",
        now=now,
    )
    page = await open_widget(browser, web, viewport=PHONE, fragment=f"token={web.token('P100')}&lang=ko")
    banner = page.locator("#incidents .incident")
    await expect(banner).to_have_count(1)
    await expect(banner).to_contain_text("서버 점검이 14:00까지 연장됩니다.")
    await expect(banner).to_contain_text(HOSTILE)  # the text, never markup
    assert await page.locator("#incidents img").count() == 0
    assert await page.evaluate("window.pwned") is None
    await player_shot(page, "incident-banner-phone")

    await store.incidents.update_notice(
        everyone.id, notice_ko="서버가 13:30에 열렸습니다.", notice_en=None, actor="cli"
    )
    await expect(banner).to_have_text("공지서버가 13:30에 열렸습니다.")
    await page.locator("#lang").click()
    await expect(banner).to_contain_text("Notice")
    await expect(banner).to_contain_text("Maintenance is extended to 14:00.")
    await page.locator("#lang").click()
    await page.set_viewport_size({"width": 1280, "height": 860})
    await player_shot(page, "incident-banner-desktop")

    await store.incidents.close(everyone.id, actor="cli", now=now)
    await expect(page.locator("#incidents")).to_be_hidden()
    assert page.errors == []  # type: ignore[attr-defined]
