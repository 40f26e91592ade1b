"""The widget shows its feedback control under the auto-close notice: the desk keeps the notice under
the conversation's latest answer (`bot.serving.process.desk_watch`), so the history draws 👍 / 👎 beneath it and a
press is recorded for that answer, in real headless Chromium."""

from __future__ import annotations

from datetime import timedelta

from playwright.async_api import expect
from sqlalchemy import select

from bot.analytics.record import record_run
from bot.desk.auto_close import closing_notice
from bot.store import Feedback
from tests.support.browser import DESKTOP, open_widget, shot
from tests.support.web import FIXED_NOW


async def test_the_closing_notice_in_the_widget_has_the_feedback_control(browser, make_web):
    web = await make_web("native")
    thread = "web:P100:main"
    conv = web.conversations
    await conv.memory.append(thread, {"role": "user", "content": "환불 되나요?"}, kind="query")
    await record_run(
        conv.store,
        run_id="run-w1",
        thread_id=thread,
        player="player:P100",
        started_at=FIXED_NOW - timedelta(hours=49, seconds=5),
        answered_at=FIXED_NOW - timedelta(hours=49),
        locale="ko",
        outcomes=(),
    )
    await conv.memory.append(
        thread,
        {"role": "assistant", "content": "확인 후 상담원이 안내해 드릴게요."},
        run_id="run-w1",
        kind="answer",
    )
    # What the serve-level desk watch keeps when it closes the conversation.
    await conv.memory.append(
        thread, {"role": "assistant", "content": closing_notice("ko")}, run_id="run-w1", kind="answer"
    )

    page = await open_widget(browser, web, viewport=DESKTOP, fragment=f"token={web.token('P100')}&lang=ko")

    notice = page.locator(".msg.bot").last
    await expect(notice.locator(".bubble")).to_contain_text("이 상담을 종료합니다")
    await expect(notice.locator(".feedback-label")).to_have_text("도움이 되었나요?")
    await notice.locator(".feedback-up").click()
    await expect(notice.locator(".feedback")).to_have_attribute("data-vote", "up")
    await shot(page, "close_feedback_ko")
    async with conv.store.session() as s:
        votes = [(f.run_id, f.vote) for f in (await s.execute(select(Feedback))).scalars()]
    assert votes == [("run-w1", 1)]
    assert page.errors == []  # type: ignore[attr-defined]
