"""What tests under tests/web/staff/ share (helpers and constants; the fixtures are in its conftest.py)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Page, expect

from bot.staff.console import mint_link
from bot.store import Coupon
from tests.support.browser import DESKTOP, OUTPUT

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
LOGIN_CSRF = re.compile(r'name="login_csrf" value="([^"]+)"')


@dataclass
class Staff:
    client: httpx.AsyncClient
    csrf: str


async def link(web: Any, name: str = "Mina", staff_id: str = "4242") -> str:
    return await mint_link(web.conversations.store, staff_id=staff_id, staff_name=name, base=web.url)


def token_of(url: str) -> str:
    return url.split("token=", 1)[1]


async def post_login(client: httpx.AsyncClient, token: str) -> httpx.Response:
    """What a browser does with a sign-in link: open its page, then press the button."""
    page = await client.get("/staff/login", params={"token": token})
    return await client.post(
        "/staff/login", data={"token": token, "login_csrf": LOGIN_CSRF.search(page.text).group(1)}
    )


async def sign_in(web: Any, name: str = "Mina", staff_id: str = "4242") -> Staff:
    url = await link(web, name, staff_id)
    client = web.client()
    r = await post_login(client, token_of(url))
    assert r.status_code == 303 and r.headers["location"] == "/staff/conversations", r.text
    page = await client.get("/staff/conversations")
    assert page.status_code == 200
    return Staff(client, CSRF.search(page.text).group(1))


async def add_pending(web: Any, order_id: str = "ORD001", amount: int = 30_000) -> None:
    """A coupon the bot asked approval for (the seed has none)."""
    store = web.conversations.store
    async with store.session() as s, s.begin():
        from bot.store import Order

        order = await s.get(Order, order_id)
        s.add(
            Coupon(
                code=f"PEND-{order_id}",
                order_id=order_id,
                player_id=order.player_id,
                amount=amount,
                status="pending",
                issued_by="bot",
                reason="배송 지연",
                idempotency_key=f"test:{order_id}",
                created_at=web.conversations.clock() - timedelta(minutes=3),
            )
        )
    await store.audit(
        actor=f"player:{order.player_id}",
        action="coupon.issue",
        thread_id="web:p:main",
        target=order_id,
        code="PENDING_APPROVAL",
    )


STAFF_OUTPUT = OUTPUT / "staff"
TABLET = {"width": 820, "height": 1180}


async def shot(page: Page, name: str) -> Path:
    STAFF_OUTPUT.mkdir(parents=True, exist_ok=True)
    path = STAFF_OUTPUT / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000
    return path


async def open_console(browser, web, viewport=DESKTOP, locale: str = "ko-KR") -> Page:
    context = await browser.new_context(viewport=viewport, locale=locale, accept_downloads=True)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.errors = errors  # type: ignore[attr-defined]
    await page.goto(await link(web))
    await shot(page, "login")
    await page.get_by_role("button", name="로그인").press("Enter")  # autofocused: Enter signs in
    await expect(page).to_have_url(f"{web.url}/staff/conversations")
    return page


@dataclass
class Event:
    event: str
    data: str


async def events_of(response: httpx.Response) -> AsyncIterator[Event]:
    """`text/event-stream` blocks (pings skipped); `data` kept as text (fragments are HTML)."""
    name, data = "message", []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield Event(name, "\n".join(data))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))


async def next_event(
    stream: AsyncIterator[Event], name: str, contains: str = "", within: float = 10
) -> Event:
    async def find() -> Event:
        async for e in stream:
            if e.event == name and contains in e.data:
                return e
        raise AssertionError(f"the stream ended before a {name!r} event with {contains!r}")

    return await asyncio.wait_for(find(), within)


# A conversation as the console shows it (the Korean staff review and the phone lists draw it).
THREAD = "web:P100:main"
ENGINE_NOTE = "Answer the player now, from its result only; do not call another tool."
DRAFT = "ORD001 is delayed. I will issue a coupon of 30,000 KRW."


async def a_conversation(web: Any) -> None:
    """A player's question, the engine's machinery (a tool call and result, an English note to the
    model, a draft it threw away), the answer the player got and a staff reply."""
    memory = web.conversations.memory
    await memory.append(
        THREAD,
        {"role": "user", "content": "ORD001 배송이 너무 늦어요. 보상 받을 수 있나요?"},
        run_id="r1",
        kind="query",
    )
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "lookup_order", "arguments": '{"order_id": "ORD001"}'},
    }
    await memory.append(
        THREAD, {"role": "assistant", "content": "", "tool_calls": [call]}, run_id="r1", kind="step"
    )
    await memory.append(
        THREAD,
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "lookup_order",
            "content": "ORD001 · 배송 지연(delayed)",
        },
        run_id="r1",
        kind="tool_result",
    )
    await memory.append(THREAD, {"role": "user", "content": ENGINE_NOTE}, run_id="r1", kind="reformat")
    await memory.append(THREAD, {"role": "assistant", "content": DRAFT}, run_id="r1", kind="step")
    await memory.append(
        THREAD,
        {
            "role": "assistant",
            "content": "ORD001은 배송 지연 상태입니다. 보상 쿠폰은 운영진 확인 후 안내드릴게요.",
        },
        run_id="r1",
        kind="answer",
    )
    await memory.append(
        THREAD,
        {"role": "assistant", "name": "staff:Mina", "content": "운영진 미나입니다. 바로 확인해 드릴게요."},
        kind="answer",
    )
