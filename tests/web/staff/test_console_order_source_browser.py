"""The console's approval page with `ARCA_ORDER_SOURCE=http` reads each pending coupon's order through
the order source, live (not the embedded mirror); while the game's backend cannot answer it says so
(SOURCE_UNAVAILABLE, Korean and English) and shows the ledger's copy of the facts the coupon was decided
on, labelled as such."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect

from bot.config import load_settings
from tests.game.orders_world import load_world, wire_order
from tests.support.context import LUNA
from tests.support.game_backend import GameBackend
from tests.support.staff_console import open_console, shot, sign_in
from tests.support.web import SECRET
from tools.coupon_rules import CouponRules
from tools.ledger import issue_for_player


@pytest.fixture
async def web(make_web: Any, game_backend: GameBackend, tmp_path: Any) -> Any:
    load_world(game_backend)
    settings = load_settings(
        ARCA_DATA_DIR=str(tmp_path),
        ARCA_WEB_SECRET=SECRET,
        ARCA_ORDER_SOURCE="http",
        ARCA_GAME_API_URL=game_backend.url,
        ARCA_GAME_API_TOKEN=game_backend.token,
        ARCA_GAME_API_TIMEOUT_S="1",
        ARCA_GAME_API_RETRIES="1",
    )
    harness = await make_web("native", settings=settings)
    yield harness
    await harness.conversations.services.orders.close()


def _row(page: str, order_id: str) -> str:
    start = page.index(f'data-order="{order_id}"')
    return page[start : page.index("</tr>", start)]


async def test_approvals_read_the_order_live_then_the_ledger_copy_when_the_backend_is_down(
    web: Any, game_backend: GameBackend
) -> None:
    conv = web.conversations
    pending = await issue_for_player(
        conv.store,
        CouponRules(),
        actor=LUNA,
        order_id="ORD501",
        amount=10_000,
        idempotency_key="k-review",
        now=conv.clock(),
        review=True,  # an untrusted message: the coupon waits for staff
        orders=conv.services.orders,
    )
    assert pending.code == "PENDING_APPROVAL"
    staff = await sign_in(web)

    # The order changed in the game after the coupon was asked for: the page shows what the game holds.
    game_backend.load(
        players=[], orders=[wire_order("ORD501", status="cancelled", updated_at="2026-03-02T11:00:00+09:00")]
    )
    row = _row((await staff.client.get("/staff/approvals")).text, "ORD501")
    assert 'data-origin="live"' in row and "주문 취소" in row and "한정판 굿즈" in row
    assert "source-unavailable" not in (await staff.client.get("/staff/approvals")).text

    game_backend.faults(error_rate=1.0)  # the backend is down
    page = (await staff.client.get("/staff/approvals")).text
    assert 'id="source-unavailable"' in page and "[SOURCE_UNAVAILABLE]" in page
    assert "게임 서버에서 주문 정보를 지금 읽을 수 없습니다" in page
    row = _row(page, "ORD501")
    assert (
        'data-origin="ledger"' in row and "배송 지연" in row and "장부 사본" in row
    )  # what it was decided on
    english = (await staff.client.get("/staff/approvals", params={"lang": "en"})).text
    assert "[SOURCE_UNAVAILABLE] The game backend cannot be read now" in english
    assert "ledger copy" in _row(english, "ORD501")


@pytest.mark.slow
async def test_the_approval_page_says_the_backend_is_down_in_a_browser(
    web: Any,
    game_backend: GameBackend,
    browser: Any,
) -> None:
    conv = web.conversations
    await issue_for_player(
        conv.store,
        CouponRules(),
        actor=LUNA,
        order_id="ORD501",
        amount=10_000,
        idempotency_key="k-review",
        now=conv.clock(),
        review=True,
        orders=conv.services.orders,
    )
    game_backend.faults(error_rate=1.0)
    page = await open_console(browser, web)
    await page.goto(f"{web.url}/staff/approvals")
    await expect(page.locator("#source-unavailable")).to_be_visible()
    await expect(page.locator('tr[data-order="ORD501"] td.order-status')).to_contain_text("장부 사본")
    await shot(page, "approvals-source-unavailable")
    assert page.errors == []  # type: ignore[attr-defined]
