"""The widget's "상담원 연결 / Talk to a person" button in real headless Chromium: under an answer, a press
reaches the escalation path with the staff-hours notice and makes no model call (the fake OpenAI server
counts requests). Screenshot in tests/web/output/person_button_ko.png."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from playwright.async_api import expect
from sqlalchemy import select

from bot.config import load_settings
from bot.desk.hours import SupportHours
from bot.store import Escalation
from tests.fakes.openai_server import FakeOpenAIServer, reply
from tests.support.browser import DESKTOP, open_widget, send, shot
from tests.support.web import FIXED_NOW, SECRET

HOURS = "sat 10:00-14:00"
"""Staff are away on Monday 2026-11-30 10:00 KST (the web tests' clock)."""


async def test_the_person_button_escalates_with_the_hours_notice_and_no_model_call(
    browser,
    make_web,
    tmp_path,
):
    answer = "안녕하세요! 아르카 온라인 고객 지원입니다. 무엇을 도와드릴까요?"
    async with FakeOpenAIServer([reply(answer), reply(answer)]) as fake:
        settings = load_settings(
            ARCA_DATA_DIR=str(tmp_path),
            ARCA_WEB_SECRET=SECRET,
            ARCA_MODEL="fake-model",
            ARCA_MODEL_TOOL_CALL=True,
            OPENAI_BASE_URL=fake.base_url,
            OPENAI_API_KEY="sk-test-not-a-real-key",
            ARCA_LLM_MAX_RETRIES=0,
            ARCA_SUPPORT_HOURS=HOURS,
        )
        from bot.app import make_llm_factory

        llm_factory = make_llm_factory(settings)
        web = await make_web(llm_factory=llm_factory, settings=settings)
        page = await open_widget(
            browser, web, viewport=DESKTOP, fragment=f"token={web.token('P100')}&lang=ko"
        )
        await send(page, "안녕하세요")
        first = page.locator(".msg.bot").nth(0)
        await expect(first.locator(".bubble")).to_have_text(answer)
        button = first.get_by_role("button", name="상담원 연결")
        await expect(button).to_be_visible()
        await web.idle()
        calls_before = len(fake.requests)

        await button.click()
        notice = page.locator(".msg.bot").nth(1).locator(".bubble")
        await expect(notice).to_contain_text("상담원 연결을 요청했습니다")
        away = SupportHours.parse(HOURS, ZoneInfo("Asia/Seoul")).notice(FIXED_NOW, "ko")
        await expect(notice).to_contain_text(away.splitlines()[0])
        await web.idle()
        await shot(page, "person_button_ko")
        calls_after = len(fake.requests)
        await llm_factory().close()

    assert calls_before == 2 and calls_after == calls_before  # the press made no model call
    await expect(page.locator(".msg.user").nth(1)).to_have_text("상담원 연결")
    await expect(button).to_be_disabled()
    async with web.conversations.store.session() as s:
        [escalation] = (await s.execute(select(Escalation))).scalars().all()
    assert escalation.player_id == "P100" and escalation.thread_id.startswith("web:")
    assert page.errors == []  # type: ignore[attr-defined]
