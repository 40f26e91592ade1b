"""lookup_order and list_my_orders: own orders only, indistinguishable refusals, the facts the model needs."""

from __future__ import annotations

import json

from sqlalchemy import select

from bot.store import AuditEntry
from tests.support.context import LUNA, SOL, STAFF, UNLINKED
from tools.base import ResultCode


async def test_lookup_names_id_item_amount_status_code_and_korean_label(registry, ctx_for):
    res = await registry.execute("lookup_order", {"order_id": "ORD001"}, ctx_for())
    assert res.code == ResultCode.OK
    for part in ("ORD001", "한정판 굿즈", "39,000원", "배송 지연 (delayed)"):
        assert part in res.message
    assert "P200" not in res.message


async def test_lookup_in_english_keeps_the_code_and_korean_label(registry, ctx_for):
    res = await registry.execute("lookup_order", {"order_id": "ORD001"}, ctx_for(locale="en"))
    assert "39,000 KRW" in res.message and "delayed" in res.message and "배송 지연" in res.message


async def test_lookup_normalises_the_order_id(registry, ctx_for):
    res = await registry.execute("lookup_order", {"order_id": " ord001\n"}, ctx_for())
    assert res.code == ResultCode.OK and "ORD001" in res.message


async def test_another_players_order_looks_exactly_like_a_missing_one(registry, ctx_for, store):
    other = await registry.execute("lookup_order", {"order_id": "ORD003"}, ctx_for())
    missing = await registry.execute("lookup_order", {"order_id": "ORD777"}, ctx_for())
    assert other.code == missing.code == ResultCode.ORDER_NOT_FOUND
    assert other.message.replace("ORD003", "ID") == missing.message.replace("ORD777", "ID")
    assert other.data.keys() == missing.data.keys()
    assert "펫 상자" not in other.message and "P200" not in other.message
    async with store.session() as s:
        rows = (
            (await s.execute(select(AuditEntry).where(AuditEntry.action == "tool:lookup_order")))
            .scalars()
            .all()
        )
    reasons = {r.target: json.loads(r.detail)["why"] for r in rows}
    assert reasons == {"ORD003": "other_player", "ORD777": "missing"}


async def test_the_owner_sees_their_order(registry, ctx_for):
    res = await registry.execute("lookup_order", {"order_id": "ORD003"}, ctx_for(SOL))
    assert res.code == ResultCode.OK and "펫 상자" in res.message


async def test_staff_may_look_up_any_order(registry, ctx_for):
    res = await registry.execute("lookup_order", {"order_id": "ORD003"}, ctx_for(STAFF))
    assert res.code == ResultCode.OK and "P200" in res.message


async def test_lookup_without_a_linked_account_is_not_linked(ctx_for):
    from tools.orders import LookupOrderArgs, lookup_order

    res = await lookup_order.fn(LookupOrderArgs(order_id="ORD001"), ctx_for(UNLINKED))
    assert res.code == ResultCode.NOT_LINKED


async def test_registry_denies_order_tools_to_unlinked_users(registry, ctx_for):
    res = await registry.execute("lookup_order", {"order_id": "ORD001"}, ctx_for(UNLINKED))
    assert res.code == ResultCode.DENIED


async def test_lookup_shows_the_active_coupon(registry, ctx_for):
    issued = await registry.execute("issue_coupon", {"order_id": "ORD001", "amount": 8000}, ctx_for())
    res = await registry.execute("lookup_order", {"order_id": "ORD001"}, ctx_for())
    assert issued.data["coupon"]["code"] in res.message and "8,000원" in res.message


async def test_list_my_orders_newest_first_capped_at_ten_with_ids_and_statuses(registry, ctx_for):
    res = await registry.execute("list_my_orders", {}, ctx_for())
    assert res.code == ResultCode.OK
    ids = [o["id"] for o in res.data["orders"]]
    assert ids[:2] == ["ORD002", "ORD001"] and len(ids) == 10 and res.data["total"] == 12
    assert "ORD003" not in res.message
    assert "ORD002: 배송 완료 (delivered)" in res.message


async def test_list_my_orders_filters_by_status_code_or_korean_label(registry, ctx_for):
    by_code = await registry.execute("list_my_orders", {"status": "delivered"}, ctx_for())
    by_label = await registry.execute("list_my_orders", {"status": "배송 완료"}, ctx_for())
    assert (
        [o["id"] for o in by_code.data["orders"]] == ["ORD002"] == [o["id"] for o in by_label.data["orders"]]
    )
    none = await registry.execute("list_my_orders", {"status": "refunded"}, ctx_for())
    assert none.code == ResultCode.OK and none.data["orders"] == []


async def test_unknown_status_is_an_error_listing_the_valid_codes(registry, ctx_for):
    res = await registry.execute("list_my_orders", {"status": "lost"}, ctx_for())
    assert res.code == ResultCode.ERROR
    for code in ("paid", "preparing", "shipping", "delayed", "delivered", "cancelled", "refunded"):
        assert code in res.message


async def test_list_my_orders_only_lists_the_actors_orders(registry, ctx_for):
    res = await registry.execute("list_my_orders", {}, ctx_for(SOL))
    assert [o["id"] for o in res.data["orders"]] == ["ORD003"]
    assert LUNA.player_id not in res.message
