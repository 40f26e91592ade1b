"""What staff see of deliveries outside the console: `/coupon list` says where each coupon's grant into
the game stands (with the backend's reason for a refusal), and a burst of dead letters posts ONE alert
to the staff channel, not one per grant."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.game.delivery import DeadLetterAlert
from bot.staffroom.discord_staff.channel import format_staff_notice
from bot.store import Store
from tests.support.context import LUNA, NOW, STAFF
from tests.support.deliveries import open_store, worker_for
from tests.support.game_backend import GameBackend
from tests.support.store import sqlite_url
from tests.support.tools import seed
from tools.coupon_rules import CouponRules
from tools.coupon_staff import list_coupons
from tools.ledger import issue_for_player, staff_issue


@pytest.fixture
async def store(tmp_path: Path):
    s = await open_store(sqlite_url(tmp_path / "arca.db"))
    await seed(s)
    try:
        yield s
    finally:
        await s.close()


async def _issue_three(store: Store) -> None:
    await issue_for_player(
        store, CouponRules(), actor=LUNA, order_id="ORD001", amount=5000, idempotency_key="k", now=NOW
    )
    for i, order in enumerate(("ORD002", "ORD003")):
        await staff_issue(
            store,
            CouponRules(),
            actor=STAFF,
            order_id=order,
            amount=2000,
            reason=None,
            idempotency_key=f"s{i}",
            now=NOW,
        )


async def test_coupon_list_shows_each_grants_delivery(store: Store, game_backend: GameBackend) -> None:
    await _issue_three(store)
    listed = await list_coupons(store)
    assert listed.message.count("게임 지급 대기") == 3
    game_backend.faults(only="grants", refuse_next=1, refuse_reason="unknown player")
    worker, poster = worker_for(store, game_backend, concurrency=1)
    try:
        await worker.deliver_all()
    finally:
        await poster.aclose()
    ko = (await list_coupons(store)).message
    assert ko.count("게임 지급 완료") == 2 and "게임 지급 실패 (시도 1회: 422 unknown player)" in ko
    en = await list_coupons(store, locale="en")
    assert (
        en.message.count("in the game") == 2
        and "refused by the game (1 attempts: 422 unknown player)" in en.message
    )
    states = sorted(c["deliveries"][0]["state"] for c in en.data["coupons"])
    assert states == ["dead", "delivered", "delivered"]


async def test_coupon_list_without_deliveries_is_unchanged(tmp_path: Path) -> None:
    store = await open_store(sqlite_url(tmp_path / "none.db"), game=False)
    try:
        await seed(store)
        await _issue_three(store)
        listed = await list_coupons(store)
        assert "게임" not in listed.message and all("deliveries" not in c for c in listed.data["coupons"])
    finally:
        await store.close()


async def test_a_burst_of_dead_letters_alerts_staff_once(store: Store, game_backend: GameBackend) -> None:
    await _issue_three(store)
    told: list[tuple[str, dict[str, Any]]] = []

    async def notify(kind: str, payload: dict[str, Any]) -> None:
        told.append((kind, payload))

    clock = [NOW]
    game_backend.faults(only="grants", refuse_next=3, refuse_reason="maintenance: grants closed")
    alert = DeadLetterAlert(store, notify, clock=lambda: clock[0])
    worker, poster = worker_for(store, game_backend, concurrency=1, on_dead=alert)
    try:
        left = await worker.deliver_all()
    finally:
        await poster.aclose()
    assert left.dead == 3
    assert len(told) == 1, told  # three dead letters (three flushes with concurrency 1), one alert
    kind, payload = told[0]
    assert kind == "delivery_dead" and payload["last_error"] == "422 maintenance: grants closed"
    text = format_staff_notice(kind, payload)
    assert "게임 지급 실패" in text and "maintenance: grants closed" in text

    # The next burst, later, is announced again.
    alert = DeadLetterAlert(store, notify, clock=lambda: clock[0])
    clock[0] = NOW + timedelta(hours=1)
    dead = await store.game_deliveries.list(state="dead")
    await alert([(_job(dead[0]), "422 again")])
    await alert([(_job(dead[1]), "422 again")])
    assert len(told) == 2 and told[1][1]["dead_total"] == 3


def _job(view: Any) -> Any:
    from bot.store.game_deliveries import DeliveryJob

    return DeliveryJob(
        0,
        view.grant_id,
        view.kind,
        view.coupon_code,
        view.player_id,
        view.order_id,
        view.amount,
        "KRW",
        None,
        None,
        1,
    )
