"""The console's live updates in real headless Chromium: signed in through a link, staff see a web player's
conversation appear in the list, its player named from the first message, and turn to "bot answering"
without a reload (pushed over SSE, no polling), open it and watch the scripted run's tool call, result
code and answer arrive live; in Korean at 1280 px and in English at tablet width (screenshots in
tests/web/output/staff/)."""

from __future__ import annotations

import asyncio

from playwright.async_api import expect

from tests.support.staff_console import TABLET, open_console, shot

QUESTION = "ORD001 배송이 어디쯤인가요?"
ANSWER = "ORD001 주문은 물류 센터 사정으로 배송이 지연되고 있습니다. 오늘 안에 출고될 예정입니다."


async def watch_a_run(browser, web, *, viewport=None, lang: str = "ko") -> None:
    page = await (open_console(browser, web) if viewport is None else open_console(browser, web, viewport))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    if lang == "en":
        await page.goto(f"{web.url}/staff/conversations?lang=en")
    await expect(page.locator("body[data-live-ready]")).to_have_count(1)
    thread = "web:P100:main"
    llm = web.held_script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": ANSWER}, chunk_delay=0.05
    )
    chat = asyncio.create_task(web.chat(web.client("P100"), QUESTION))
    await asyncio.wait_for(llm.holding.wait(), 10)
    row = page.locator(f'tr[data-thread="{thread}"]')
    await expect(row).to_contain_text(QUESTION)
    await expect(row.locator(".state-answering")).to_be_visible()
    await expect(row).to_contain_text("player:P100")  # named before its first answer is recorded
    await shot(page, f"live-conversations-{lang}")

    await row.get_by_role("link").click()
    await expect(page.locator("h1")).to_have_text(thread)
    await expect(page.locator("body[data-live-ready]")).to_have_count(1)
    llm.release()
    panel = page.locator("#live-run")
    await expect(panel).to_be_visible()
    await expect(panel.locator(".ev-tool")).to_contain_text("lookup_order")
    await expect(panel.locator(".ev-tool")).to_contain_text("ORD001")
    await expect(panel.locator(".ev-result")).to_contain_text("OK ·")
    await expect(panel.locator(".run-answer")).to_have_text(ANSWER)
    await expect(panel).to_have_class("live-run finished")
    await expect(panel.locator(".run-status")).to_contain_text("완료" if lang == "ko" else "done")
    await chat
    # The stored answer reaches the history too, without a reload.
    await expect(page.locator(".history .m-assistant").last).to_contain_text("오늘 안에 출고될 예정입니다")
    await shot(page, f"live-run-{lang}")
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= (viewport or {"width": 1280})["width"], f"the page scrolls sideways ({width}px)"
    assert not [u for u in requests if "fragment=" in u], "the pages are pushed, never polled"
    assert page.errors == []  # type: ignore[attr-defined]
    await page.context.close()


async def test_watch_a_conversation_and_its_run_live(browser, web) -> None:
    await watch_a_run(browser, web)


async def test_watch_live_in_english_at_tablet_width(browser, web) -> None:
    await watch_a_run(browser, web, viewport=TABLET, lang="en")
