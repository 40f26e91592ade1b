"""Fixtures for the staff console: a running web server (tests/web/conftest.py), sign-in links, a signed-in
HTTP client with its CSRF token, and a pending coupon."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest

from bot.staff.console import mint_link
from bot.store import Coupon

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


@pytest.fixture
async def web(make_web: Any) -> Any:
    return await make_web("native")
