"""The audit log and the coupon ledger page through their rows instead of stopping silently at 200
(issue 51): a next-page link says there are more, and the next page shows them."""

from __future__ import annotations

from datetime import timedelta

from bot.staffroom.console.queries import PAGE_LIMIT
from bot.store import Coupon
from tests.support.staff_console import sign_in


async def test_the_audit_log_pages_past_its_first_200_rows(web) -> None:
    store = web.conversations.store
    for n in range(PAGE_LIMIT + 5):
        await store.audit(actor="test", action="page.test", target=f"T{n:04d}", code="OK")
    staff = await sign_in(web)
    first = (await staff.client.get("/staff/audit", params={"action": "page.test"})).text
    assert first.count("<code>page.test</code>") == PAGE_LIMIT
    assert 'id="next-page"' in first and "다음 200건 (더 있음)" in first
    assert "page=2" in first and "action=page.test" in first
    second = (await staff.client.get("/staff/audit", params={"action": "page.test", "page": "2"})).text
    assert second.count("<code>page.test</code>") == 5
    assert "T0000" in second and 'id="next-page"' not in second and "이전 200건" in second


async def test_the_ledger_pages_past_its_first_200_coupons(web) -> None:
    store = web.conversations.store
    now = web.conversations.clock()
    async with store.session() as s, s.begin():
        for n in range(PAGE_LIMIT + 3):
            s.add(
                Coupon(
                    code=f"PAGE-{n:04d}",
                    order_id="ORD001",  # revoked coupons: one order may have many
                    player_id="P100",
                    amount=1000,
                    status="revoked",
                    issued_by="staff:test",
                    reason="test",
                    idempotency_key=f"page:{n}",
                    created_at=now - timedelta(minutes=n),
                )
            )
    staff = await sign_in(web)
    first = (await staff.client.get("/staff/ledger", params={"player": "P100", "status": "revoked"})).text
    assert first.count("PAGE-") == PAGE_LIMIT and 'id="next-page"' in first
    second = (
        await staff.client.get("/staff/ledger", params={"player": "P100", "status": "revoked", "page": "2"})
    ).text
    assert second.count("PAGE-") == 3 and 'id="next-page"' not in second
