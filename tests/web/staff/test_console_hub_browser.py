"""A Discord run followed in the console's "Live run" panel, in real headless Chromium: the tool call's
arguments and result are cleaned as a web player's own stream is (another player's phone number never
reaches the page), and a run that is stopped mid-way ends the panel (`done`, the stop notice) instead of
leaving it "running" (screenshot in tests/web/output/staff/)."""

from __future__ import annotations

import asyncio

from playwright.async_api import expect

from bot.conversations import Incoming
from bot.llm import ModelRequest, ScriptedLLM, around
from tests.eventually import eventually
from tests.support.staff_console import open_console, shot
from tests.support.surface import RecordingSurface

THREAD = "discord:4242"
OTHER_PHONE = "010-2345-6789"  # P200's; the run answers P100 (Discord 9001)


async def test_a_discord_run_shows_cleaned_steps_and_a_stopped_run_ends_the_panel(browser, web) -> None:
    conv = web.conversations
    await conv.memory.append(THREAD, {"role": "user", "content": "주문 확인해 주세요"}, kind="query")
    script = ScriptedLLM(
        [{"tool": "lookup_order", "args": {"order_id": OTHER_PHONE}}, {"final": "never shown"}], mode=web.mode
    )
    holding = asyncio.Event()

    async def hold_the_second_call(request: ModelRequest) -> None:
        if request.purpose == "loop" and script.loop_calls == 1:
            holding.set()
            await asyncio.Event().wait()  # the model never answers: staff stop the run

    web.queue.append(around(script, hold_the_second_call))

    page = await open_console(browser, web)
    await page.goto(f"{web.url}/staff/conversations/{THREAD}")
    await expect(page.locator("body[data-live-ready]")).to_have_count(1)
    await eventually(lambda: conv.run_events.subscribers(THREAD), what="the page's stream to subscribe")
    actor = await conv.resolve_actor("9001", set())
    run = asyncio.create_task(conv.handle(Incoming(THREAD, actor, "ORD 확인 부탁해요"), RecordingSurface()))
    await asyncio.wait_for(holding.wait(), 10)

    panel = page.locator("#live-run")
    await expect(panel.locator(".ev-tool")).to_contain_text("lookup_order")
    await expect(panel.locator(".ev-tool")).to_contain_text("[전화번호 비공개]")
    await expect(panel.locator(".ev-result, .ev-error")).to_have_count(1)
    await expect(panel.locator(".run-status")).to_contain_text("진행 중")
    assert OTHER_PHONE not in await panel.inner_text()

    assert await conv.stop(THREAD)
    assert (await asyncio.wait_for(run, 10)).kind == "stopped"
    await expect(panel).to_have_class("live-run finished")
    await expect(panel.locator(".run-status")).to_contain_text("완료")
    await expect(panel.locator(".run-answer")).to_contain_text("중단")
    assert OTHER_PHONE not in await panel.inner_text()
    await shot(page, "live-run-discord-stopped")
    assert page.errors == []  # type: ignore[attr-defined]
    await page.context.close()
