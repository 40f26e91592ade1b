"""The incident declare form in real headless Chromium, as a Korean staff member: a date out of range comes
back as a Korean error with everything typed still in the form; a CSV past the form's limit is stopped on
the page with a Korean sentence, nothing sent and nothing lost. Screenshots in
tests/web/output/staff/incident-form-*.png."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from bot.web_kit.body_limits import INCIDENT_FORM_CAP
from tests.support.staff_console import open_console, shot


async def test_a_refused_declaration_keeps_what_was_typed(browser, web) -> None:
    page = await open_console(browser, web)
    await page.get_by_role("link", name="장애", exact=True).click()
    form = page.locator("#declare")
    await form.get_by_label("제목").fill("결제 장애")
    await form.get_by_label("플레이어 공지 (한국어)").fill("결제가 되지 않습니다. 복구 중입니다.")
    await form.get_by_label("조건에 맞는 주문").check()
    await form.get_by_label("배송 지연").check()
    await form.locator('input[name="since"]').fill("0001-01-01")
    await form.get_by_role("button", name="등록").click()

    await expect(page.locator(".flash.bad")).to_contain_text(
        "주문일 부터: 2000년부터 2100년 사이의 날짜를 입력하세요"
    )
    form = page.locator("#declare")
    await expect(form.get_by_label("제목")).to_have_value("결제 장애")
    await expect(form.get_by_label("플레이어 공지 (한국어)")).to_have_value(
        "결제가 되지 않습니다. 복구 중입니다."
    )
    await expect(form.get_by_label("조건에 맞는 주문")).to_be_checked()
    await expect(form.get_by_label("배송 지연")).to_be_checked()
    await expect(form.locator('[data-scope="orders"]')).to_be_visible()
    assert "Traceback" not in await page.content() and "Error" not in await page.locator("main").inner_text()
    await shot(page, "incident-form-date-refused")
    assert await web.conversations.store.incidents.list() == []


@pytest.mark.slow  # a 4 MB form serialised in the page: about 25 s on a loaded 2-core machine
async def test_a_csv_past_the_limit_is_stopped_on_the_page(browser, web) -> None:
    page = await open_console(browser, web)
    await page.get_by_role("link", name="장애", exact=True).click()
    form = page.locator("#declare")
    await form.get_by_label("제목").fill("대상자 보상")
    await form.get_by_label("플레이어 공지 (한국어)").fill("대상자에게 보상합니다.")
    await form.get_by_label("CSV의 플레이어").check()
    huge = "player_id\n" + "P0000001\n" * (INCIDENT_FORM_CAP // 9 + 1000)
    await page.evaluate("(text) => { document.getElementById('players-csv').value = text; }", huge)
    await form.get_by_role("button", name="등록").click()

    note = page.locator("#declare-too-large")
    await expect(note).to_contain_text("입력한 내용이 너무 큽니다(최대 4MB)")
    await expect(page).to_have_url(f"{web.url}/staff/incidents")  # not sent: the page stayed
    await expect(form.get_by_label("제목")).to_have_value("대상자 보상")
    assert await web.conversations.store.incidents.list() == []
    await page.evaluate("() => { document.getElementById('players-csv').value = 'player_id\\nP100\\n'; }")
    await shot(page, "incident-form-too-large")
