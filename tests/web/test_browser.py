"""The player widget in a real headless Chromium (Debian's `chromium`, driven by Playwright for Python):
type a message, see the tool card and the answer stream in, follow up mid-answer, at desktop and phone
width, in Korean and English, by keyboard; screenshots go to tests/web/output/ (git-ignored)."""

from __future__ import annotations

import asyncio

import aiohttp.web
from playwright.async_api import expect

from tests.support.answers import long_answer
from tests.support.browser import DESKTOP, PHONE, open_widget, send, shot


async def test_player_sees_the_tool_card_and_the_answer_stream_in(browser, make_web):
    web = await make_web("native")
    answer = (
        "ORD001 (한정판 굿즈 세트) 주문은 현재 **배송 지연** 상태입니다. 물류 센터 사정으로 출고가 늦어지고 "
        "있어요. 불편을 드려 정말 죄송합니다. 지연 보상이 필요하시면 말씀해 주세요."
    )
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"final": "ORD001은 배송 지연입니다."},
        {"answer": answer},
        chunk_delay=0.06,
    )
    page = await open_widget(browser, web, viewport=DESKTOP, fragment=f"token={web.token('P100')}&lang=ko")
    assert "token=" not in page.url  # the token leaves the address bar at once
    await expect(page.locator("#who")).to_have_text("플레이어 P100 님으로 접속됨")

    await send(page, "ORD001 주문이 아직 안 왔어요. 언제 오나요?")
    card = page.locator(".tool").first
    await expect(card.locator(".label")).to_have_text("주문 정보를 확인하고 있어요")
    bubble = page.locator(".msg.bot .bubble").last
    # Streaming: the bubble shows part of the answer before all of it.
    await page.wait_for_function(
        "n => { const b = [...document.querySelectorAll('.msg.bot .bubble')].pop();"
        " return b && b.textContent.length > 0 && b.textContent.length < n; }",
        arg=len(answer.replace("**", "")),
    )
    await expect(bubble).to_have_text(answer.replace("**", ""))
    await expect(bubble.locator("strong")).to_have_text("배송 지연")
    await expect(card).to_have_class("tool done")
    await expect(card.locator(".state")).to_have_text("확인했어요")
    await expect(page.locator(".msg.bot .feedback")).to_have_count(1)
    # What a support agent would say it is doing, not the machinery.
    shown = await page.locator("#log").inner_text()
    for internal in ("lookup_order", "order_id", "반복", "토큰", "Status:", "[OK]"):
        assert internal not in shown, internal
    await shot(page, "desktop_ko_tool_run")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_a_follow_up_mid_answer_is_handled(browser, make_web):
    web = await make_web("native")
    first = long_answer("ORD004 마법사 코스튬은 배송 중입니다. 택배사에 인계되어 곧 도착할 예정이에요.", 3)
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD004"}},
        {"final": first.strip()},
        chunk_delay=0.08,
    )
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD009"}},
        {"final": "ORD009 프리미엄 멤버십 30일도 배송 중입니다."},
    )
    page = await open_widget(browser, web, viewport=DESKTOP, fragment=f"token={web.token('P100')}")
    await send(page, "ORD004 어디쯤인가요?")
    await page.wait_for_function(
        "() => { const b = document.querySelector('.msg.bot .bubble'); return b && b.textContent.length > 5; }"
    )
    await send(page, "ORD009도 확인해 주세요")
    await expect(page.locator(".msg.user .note")).to_have_text("진행 중인 답변에 전달했습니다")
    turns = page.locator("li.msg.bot")
    await expect(turns).to_have_count(2)
    await expect(turns.nth(0).locator(".bubble")).to_have_text(first.strip())
    await expect(turns.nth(1).locator(".bubble")).to_have_text("ORD009 프리미엄 멤버십 30일도 배송 중입니다.")
    await expect(turns.nth(1).locator(".tool .label")).to_have_text("주문 정보를 확인하고 있어요")
    await expect(turns.nth(1).locator(".feedback")).to_have_count(1)
    await shot(page, "desktop_ko_follow_up")


async def test_a_follow_up_while_tools_run_is_injected(browser, make_web):
    web = await make_web("json")
    llm = web.held_script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"final": "ORD001은 배송 지연이고, 취소 요청도 함께 전달했습니다."},
    )
    page = await open_widget(browser, web, viewport=DESKTOP, fragment=f"token={web.token('P100')}")
    await send(page, "ORD001 확인해 주세요")
    await asyncio.wait_for(llm.holding.wait(), 10)
    await send(page, "아 그리고 급해요")
    await expect(page.locator(".msg.user .note")).to_have_text("진행 중인 답변에 전달했습니다")
    llm.release()
    turn = page.locator("li.msg.bot").last
    await expect(turn.locator(".tools .note")).to_have_text("추가 메시지 반영: 아 그리고 급해요")
    await expect(turn.locator(".feedback")).to_have_count(1)
    await expect(page.locator("li.msg.bot")).to_have_count(1)


async def test_phone_width_in_english_for_a_guest(browser, make_web):
    web = await make_web("native")
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {
            "final": "I can't look up orders for a guest: please open this chat from the game so you are signed in."
        },
    )
    page = await open_widget(browser, web, viewport=PHONE, fragment="lang=en")
    await expect(page.locator("#who")).to_have_text(
        "Guest chat (sign in through the game for orders and coupons)"
    )
    await expect(page.locator("#send")).to_have_text("Send")
    await send(page, "Where is my order ORD001?")
    card = page.locator(".tool").first
    # A lookup a guest may not run is not a green "done": it says, in plain words, it could not go ahead.
    await expect(card).to_have_class("tool declined")
    await expect(card.locator(".label")).to_have_text("Checking your order")
    await expect(card.locator(".state")).to_have_text("Couldn't go ahead")
    await expect(page.locator(".msg.bot .feedback")).to_have_count(1)
    shown = await page.locator("#log").inner_text()
    for internal in ("lookup_order", "DENIED", "iterations", "tokens", "Ask the player"):
        assert internal not in shown, internal
    overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, "the page scrolls sideways on a phone"
    await shot(page, "phone_en_guest")


async def test_keyboard_only_and_nothing_is_parsed_as_html(browser, make_web):
    web = await make_web("native", debug_view=True)  # the operator's view draws the raw arguments too
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "<img src=x onerror=window.pwned=1>"}},
        {"final": "<b>굵게</b> <img src=x onerror=window.pwned=2> 답변입니다."},
    )
    page = await open_widget(browser, web, viewport=DESKTOP, fragment=f"token={web.token('P100')}&debug=1")
    for _ in range(5):
        if await page.evaluate("document.activeElement.id") == "input":
            break
        await page.keyboard.press("Tab")
    assert await page.evaluate("document.activeElement.id") == "input"
    await page.keyboard.type("<script>window.pwned=3</script> 주문 확인")
    await page.keyboard.press("Enter")
    await expect(page.locator(".msg.bot .footer")).to_contain_text("반복")
    await expect(page.locator(".msg.user .bubble").first).to_have_text(
        "<script>window.pwned=3</script> 주문 확인"
    )
    await expect(page.locator(".msg.bot .bubble")).to_contain_text("<b>굵게</b>")
    assert await page.locator("#log img, #log b, #log script").count() == 0
    assert await page.evaluate("window.pwned === undefined")
    # The tool card opens from the keyboard.
    summary = page.locator(".tool summary").first
    await summary.focus()
    await page.keyboard.press("Enter")
    await expect(page.locator(".tool").first).to_have_attribute("open", "")
    # Shift+Enter is a new line, not a send.
    await page.locator("#input").focus()
    await page.keyboard.type("첫 줄")
    await page.keyboard.press("Shift+Enter")
    await page.keyboard.type("둘째 줄")
    assert await page.locator("#input").input_value() == "첫 줄\n둘째 줄"
    await expect(page.locator(".msg.user")).to_have_count(1)


async def test_history_divider_and_the_page_without_an_llm(browser, make_web):
    web = await make_web("native")
    web.script({"final": "네, 잘 읽었습니다. " * 40})
    token = web.token("P100")
    client = web.client("P100")
    await web.chat(client, "제 사정을 길게 설명할게요. " * 120)
    web.script({"final": "요약하면 배송 지연 문의입니다."}, abilities={"context_window": 1_000})
    page = await open_widget(browser, web, viewport=PHONE, fragment=f"token={token}")
    # The earlier conversation comes back from the history endpoint.
    await expect(page.locator(".msg.user")).to_have_count(1)
    await send(page, "정리해 주세요")
    await expect(page.locator("li.divider")).to_have_text("이전 대화를 요약했습니다 (4 → 4)")
    await expect(page.locator(".msg.bot .bubble").last).to_have_text("요약하면 배송 지연 문의입니다.")
    await shot(page, "phone_ko_history_compact")

    down = await make_web("native", llm_ready=False)
    page = await open_widget(browser, down, viewport=DESKTOP, fragment="lang=en")
    await expect(page.locator("#notice")).to_have_text(
        "We can't answer right now. Please try again later or ask to be put through to our support team."
    )
    await send(page, "hello")
    await expect(page.locator(".msg.user .note")).to_contain_text("We can't answer right now")
    for where in ("#notice", ".msg.user .note"):
        assert "ARCA_MODEL" not in await page.locator(where).inner_text()
    await shot(page, "desktop_en_no_llm")


async def test_a_game_page_embeds_the_widget_with_one_script_tag(browser, make_web):
    web = await make_web("native")
    web.script({"final": "안녕하세요, 루나 님! 무엇을 도와드릴까요?"})
    html = (
        "<!doctype html><html><body><h1>Arca Online</h1>"
        f'<script src="{web.url}/static/embed.js" data-token="{web.token("P100")}" '
        'data-thread="game" data-lang="ko"></script></body></html>'
    )
    # The game's own page, served from another origin than the bot's.
    game = aiohttp.web.Application()

    async def game_page(request: aiohttp.web.Request) -> aiohttp.web.Response:
        return aiohttp.web.Response(text=html, content_type="text/html")

    game.router.add_get("/", game_page)
    runner = aiohttp.web.AppRunner(game)
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    context = await browser.new_context(viewport=DESKTOP)
    page = await context.new_page()
    await page.goto(f"http://127.0.0.1:{port}/")
    button = page.get_by_role("button", name="Arca Online Support")
    await expect(button).to_have_attribute("aria-expanded", "false")
    await button.click()
    await expect(button).to_have_attribute("aria-expanded", "true")
    chat = page.frame_locator("iframe[title='Arca Online Support']")
    await expect(chat.locator("#who")).to_have_text("플레이어 P100 님으로 접속됨")
    await chat.locator("#input").fill("안녕하세요")
    await chat.locator("#input").press("Enter")
    await expect(chat.locator(".msg.bot .bubble")).to_have_text("안녕하세요, 루나 님! 무엇을 도와드릴까요?")
    history = (await web.client("P100").get("/api/threads/game")).json()["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    await shot(page, "desktop_embedded")
    await runner.cleanup()


async def test_reloading_mid_answer_picks_the_running_stream_back_up(browser, make_web):
    web = await make_web("native")
    answer = long_answer("ORD024 쿠션 굿즈는 배송 지연 상태입니다. 출고 일정이 잡히면 바로 알려 드릴게요.", 5)
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD024"}},
        {"final": answer.strip()},
        chunk_delay=0.1,
    )
    page = await open_widget(browser, web, viewport=PHONE, fragment=f"token={web.token('P100')}&thread=t2")
    await send(page, "ORD024 언제 와요?")
    await page.wait_for_function(
        "() => { const b = document.querySelector('.msg.bot .bubble'); return b && b.textContent.length > 10; }"
    )
    assert "token=" not in page.url
    await page.reload()
    # The tab kept the token (not the address bar): still player P100, on thread t2.
    await expect(page.locator("#who")).to_have_text("플레이어 P100 님으로 접속됨")
    await expect(page.locator(".msg.user .bubble")).to_have_text("ORD024 언제 와요?")
    await expect(page.locator(".msg.bot .bubble").last).to_have_text(answer.strip())
    await expect(page.locator(".msg.bot .tool .label")).to_have_text("주문 정보를 확인하고 있어요")
    assert not web.conversations.is_running("web:P100:t2")
