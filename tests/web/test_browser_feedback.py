"""The widget's 👍 / 👎 in a real headless Chromium: a vote, then a change with a comment, lands in the
store as one row for the answer it was pressed under (also when a later answer exists)."""

from __future__ import annotations

import asyncio

from playwright.async_api import expect
from sqlalchemy import select

from bot.store import Feedback, Run
from tests.support.browser import DESKTOP, open_widget, send, shot


async def test_the_player_rates_an_earlier_answer_then_changes_the_vote_with_a_comment(browser, make_web):
    web = await make_web("native")
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"final": "ORD001은 배송 지연 중입니다. 불편을 드려 죄송합니다."},
    )
    web.script({"tool": "lookup_order", "args": {"order_id": "ORD004"}}, {"final": "ORD004는 배송 중입니다."})
    page = await open_widget(browser, web, viewport=DESKTOP, fragment=f"token={web.token('P100')}&lang=ko")

    await send(page, "ORD001 언제 오나요?")
    first = page.locator(".msg.bot").nth(0)
    await expect(first.locator(".bubble")).to_have_text(
        "ORD001은 배송 지연 중입니다. 불편을 드려 죄송합니다."
    )
    await expect(first.locator(".feedback-label")).to_have_text("도움이 되었나요?")
    # A drawn icon, not the 👍 character (a missing emoji font would show an empty box).
    await expect(first.locator(".feedback-up svg")).to_be_visible()
    await expect(first.locator(".feedback-up")).to_have_attribute("aria-label", "👍 helpful")
    await send(page, "ORD004는요?")
    second = page.locator(".msg.bot").nth(1)
    await expect(second.locator(".bubble")).to_have_text("ORD004는 배송 중입니다.")
    await web.idle()
    async with web.conversations.store.session() as s:
        runs = {r.run_id for r in (await s.execute(select(Run))).scalars()}
    assert len(runs) == 2

    async def votes() -> list[tuple[str, int, str | None]]:
        async with web.conversations.store.session() as s:
            return [(f.run_id, f.vote, f.comment) for f in (await s.execute(select(Feedback))).scalars()]

    # 👍 under the first answer (not the thread's latest).
    await first.locator(".feedback-up").click()
    await expect(first.locator(".feedback")).to_have_attribute("data-vote", "up")
    await expect(first.locator(".feedback-label")).to_have_text("평가 감사합니다!")
    [(voted_run, vote, comment)] = await votes()
    assert voted_run in runs and vote == 1 and comment is None
    latest = (await web.client("P100").get("/api/threads/main")).json()["messages"][-1]["run"]
    assert voted_run != latest

    # Changed to 👎 with a comment from the prompt: still one row, changed.
    page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept("배송 보상도 알려주세요")))
    await first.locator(".feedback-down").click()
    await expect(first.locator(".feedback")).to_have_attribute("data-vote", "down")
    assert await votes() == [(voted_run, -1, "배송 보상도 알려주세요")]
    await expect(second.locator(".feedback")).not_to_have_attribute("data-vote", "up")
    await shot(page, "desktop_ko_feedback")
    assert page.errors == []  # type: ignore[attr-defined]
