"""The console as a Korean staff member sees it (issue 51), in headless Chromium at desktop and phone
widths: the conversation shows what the player and staff saw, labelled 플레이어 / 봇 / 운영진, with the
engine's notes to the model and its discarded drafts behind a toggle; the dashboard shows the staff hours
in force; SLA reminders name the player and the due time and say 지남 once missed. Screenshots in
tests/web/output/staff/ (and in $REVIEW_SHOTS_DIR when set, for a before/after review)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from playwright.async_api import Page, expect

from bot.analytics.staff_response import SlaTargets
from bot.desk.hours import SupportHours
from bot.desk.sla import send_reminders
from bot.store import Escalation, utcnow
from tests.support.browser import DESKTOP
from tests.support.staff_console import DRAFT, ENGINE_NOTE, THREAD, open_console, shot
from tests.support.staff_console import a_conversation as _a_conversation

PHONE = {"width": 390, "height": 844}


async def _shot(page: Page, name: str) -> None:
    await shot(page, name)
    folder = os.environ.get("REVIEW_SHOTS_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        prefix = os.environ.get("REVIEW_SHOTS_PREFIX", "after")
        await page.screenshot(path=str(Path(folder) / f"{prefix}_{name}.png"), full_page=True)


async def test_the_conversation_shows_what_the_player_and_staff_saw(browser, web) -> None:
    await _a_conversation(web)
    for viewport, name in ((DESKTOP, "desktop"), (PHONE, "phone")):
        page = await open_console(browser, web, viewport=viewport)
        await page.goto(f"{web.url}/staff/conversations/{THREAD}")
        history = page.locator("#history")
        await expect(history.locator(".m").filter(has_text="ORD001 배송이 너무 늦어요")).to_contain_text(
            "플레이어"
        )
        await expect(history.locator(".m").filter(has_text="운영진 확인 후 안내")).to_contain_text("봇")
        await expect(history.locator(".m-staff")).to_contain_text("운영진 · Mina")
        await expect(history.get_by_text(ENGINE_NOTE)).to_be_hidden()
        await expect(history.get_by_text(DRAFT)).to_be_hidden()
        await expect(history.locator(".m-tool")).to_be_hidden()
        assert "USER" not in (await history.inner_text()).upper().split()
        await _shot(page, f"{name}_conversation")

        await page.get_by_label("엔진 기록 보기", exact=False).check()
        await expect(history.get_by_text(ENGINE_NOTE)).to_be_visible()
        await expect(history.locator(".m").filter(has_text=ENGINE_NOTE)).to_contain_text("엔진 → 모델")
        await expect(history.locator(".m").filter(has_text=DRAFT)).to_contain_text("초안 (전달 안 됨)")
        await expect(history.locator(".m-tool")).to_contain_text("도구 결과")
        await _shot(page, f"{name}_conversation_engine_records")
        assert page.errors == []  # type: ignore[attr-defined]

    page = await open_console(browser, web, locale="en-US")
    await page.goto(f"{web.url}/staff/conversations/{THREAD}?lang=en")
    history = page.locator("#history")
    await expect(history.locator(".m").filter(has_text="ORD001 배송이 너무 늦어요")).to_contain_text("Player")
    await expect(history.locator(".m-staff")).to_contain_text("Staff · Mina")


async def test_a_long_history_says_how_many_earlier_messages_are_not_shown(web) -> None:
    from bot.staffroom.console import queries
    from tests.support.staff_console import sign_in

    memory = web.conversations.memory
    await memory.append_many(
        THREAD,
        [{"role": "user", "content": f"메시지 {n}"} for n in range(queries.HISTORY_LIMIT + 7)],
        kind="query",
    )
    staff = await sign_in(web)
    page = (await staff.client.get(f"/staff/conversations/{THREAD}")).text
    assert "이전 메시지 7개는 표시하지 않았습니다." in page


async def test_the_dashboard_shows_the_staff_hours_in_force(browser, web) -> None:
    web.deps.support_hours = SupportHours.parse(
        "월-금 10:00-19:00; 토 10:00-14:00; 일 22:00-06:00", ZoneInfo("Asia/Seoul")
    )
    for viewport, name in ((DESKTOP, "desktop"), (PHONE, "phone")):
        page = await open_console(browser, web, viewport=viewport)
        await page.goto(f"{web.url}/staff/dashboard")
        card = page.locator("#staff-hours")
        await expect(card).to_contain_text("운영진 근무 시간")
        await expect(card).to_contain_text("월–금 10:00–19:00")
        await expect(card).to_contain_text("일 22:00–다음 날 06:00")
        await expect(card.locator(".hours-now")).to_contain_text("지금")
        overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"the dashboard scrolls sideways by {overflow}px at {name} width"
        await _shot(page, f"{name}_dashboard")


async def test_sla_reminders_read_as_sentences_with_due_times(browser, web) -> None:
    store = web.conversations.store
    now = utcnow()
    async with store.session() as s, s.begin():
        s.add(
            Escalation(
                thread_id=THREAD,
                player_id="P100",
                summary="배송 지연 보상 문의",
                created_at=now - timedelta(minutes=90),
            )
        )
        s.add(
            Escalation(
                thread_id="web:P200:main",
                player_id="P200",
                summary="환불 문의",
                created_at=now - timedelta(minutes=55),
            )
        )

    async def notify(kind: str, payload: dict) -> None:
        return None

    targets = SlaTargets(timedelta(hours=1), timedelta(hours=8), timedelta(minutes=10))
    assert len(await send_reminders(store, notify, targets, now)) == 2
    web.deps.sla_targets = targets
    for viewport, name in ((DESKTOP, "desktop"), (PHONE, "phone")):
        page = await open_console(browser, web, viewport=viewport)
        card = page.locator("#sla-reminders")
        missed = card.locator("li").filter(has_text="P100")
        due = card.locator("li").filter(has_text="P200")
        await expect(missed).to_contain_text("첫 응답 목표 지남")
        await expect(missed).to_contain_text("배송 지연 보상 문의")
        await expect(due).to_contain_text("첫 응답 목표 임박")
        await expect(card).not_to_contain_text("escalation:")
        await expect(card).to_contain_text("기한")
        await _shot(page, f"{name}_sla_reminders")
