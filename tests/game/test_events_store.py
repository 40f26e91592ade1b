"""The event receiver on SQLite and PostgreSQL: one event applied once when delivered several times at
once, an order only when newer, and one link code redeemed once when two events race for it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.game.events import EventReceiver, signature_header
from bot.game.linking import request_code
from bot.store import Order, Player, Store
from bot.store.seed import DEFAULT_SEED, apply_seed, load_seed_file
from tests.support.game_events import SECRET, event, order

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


@pytest.fixture
async def receiver(db_url: str) -> AsyncIterator[EventReceiver]:
    store = Store(db_url)
    await store.open()
    await apply_seed(store, load_seed_file(DEFAULT_SEED))
    try:
        yield EventReceiver(store, [SECRET.encode()], clock=lambda: NOW)
    finally:
        await store.close()


async def _send(receiver: EventReceiver, body: dict) -> tuple[int, dict]:
    raw = json.dumps(body).encode()
    answer = await receiver.receive(raw, signature_header(SECRET.encode(), raw), "127.0.0.1")
    return answer.status, answer.body


async def test_one_event_delivered_at_once_many_times_is_applied_once(receiver):
    body = event("order.upserted", order(updated_at="2026-12-06T12:00:00Z"), "evt_many")

    answers = await asyncio.gather(*(_send(receiver, body) for _ in range(6)))

    assert sorted(b["status"] for _, b in answers) == ["applied"] + ["duplicate"] * 5


async def test_orders_arriving_out_of_order_keep_the_newest(receiver):
    times = ["2026-12-06T12:00:03Z", "2026-12-06T12:00:01Z", "2026-12-06T12:00:02Z"]
    statuses = ["delivered", "paid", "shipping"]

    answers = [
        await _send(receiver, event("order.upserted", order(updated_at=t, status=s)))
        for t, s in zip(times, statuses, strict=True)
    ]

    assert [b["status"] for _, b in answers] == ["applied", "stale", "stale"]
    async with receiver.store.session() as s:
        assert (await s.get(Order, "ORD777")).status == "delivered"


async def test_two_links_racing_for_one_code_link_once(receiver):
    issued = await request_code(receiver.store, "9009", "discord:1", NOW)
    bodies = [event("account.link", {"code": issued.code, "player_id": p}) for p in ("P900", "P300")]

    answers = await asyncio.gather(*(_send(receiver, b) for b in bodies))

    assert sorted(status for status, _ in answers) == [200, 400]
    refused = next(b for status, b in answers if status == 400)
    assert refused == {"error": "used_link_code"}
    assert await receiver.store.players.id_for_discord("9009") in ("P900", "P300")


async def test_a_new_order_sent_at_once_in_several_versions_keeps_the_newest(receiver):
    """Distinct events of one order the bot never saw, of a player it never saw, race: each insert but one
    loses, runs again and compares times; the newest wins, the player exists once, as a stub."""
    times = [f"2026-12-06T12:00:0{i}Z" for i in range(1, 6)]
    bodies = [
        event("order.upserted", order("ORD900", updated_at=t, status="paid", player="P9NEW")) for t in times
    ]
    bodies[-1]["data"]["status"] = "delivered"

    answers = await asyncio.gather(*(_send(receiver, b) for b in bodies))

    assert all(status == 200 for status, _ in answers), answers
    assert {b["status"] for _, b in answers} <= {"applied", "stale"}
    async with receiver.store.session() as s:
        stored = await s.get(Order, "ORD900")
        assert (stored.status, stored.player_id) == ("delivered", "P9NEW")
        assert (await s.get(Player, "P9NEW")).name == "P9NEW"


async def test_a_player_event_creates_then_renames_and_keeps_the_link(receiver):
    created = await _send(receiver, event("player.upserted", {"id": "P9A", "name": "별빛", "locale": "ko"}))
    async with receiver.store.session() as s, s.begin():
        (await s.get(Player, "P9A")).discord_id = "7007"
    renamed = await _send(
        receiver, event("player.upserted", {"id": "P9A", "name": "Starlight", "locale": "en"})
    )

    assert created[1] == renamed[1] == {"status": "applied"}
    async with receiver.store.session() as s:
        player = await s.get(Player, "P9A")
        assert (player.name, player.locale, player.discord_id) == ("Starlight", "en", "7007")


async def test_refused_link_codes_are_counted_across_processes(receiver, db_url):
    """Two web processes (two stores, two receivers) count one player's bad codes together: the sixth
    attempt is refused whichever process the game's request reaches."""
    other_store = Store(db_url)
    await other_store.open()
    try:
        other = EventReceiver(other_store, [SECRET.encode()], clock=lambda: NOW)
        bad = [event("account.link", {"code": f"2222{i}-22222", "player_id": "P900"}) for i in range(5)]
        answers = [await _send(receiver if i % 2 else other, body) for i, body in enumerate(bad)]
        assert [status for status, _ in answers] == [400] * 5

        issued = await request_code(receiver.store, "9009", "discord:1", NOW)
        right = event("account.link", {"code": issued.code, "player_id": "P900"})
        for process in (receiver, other):
            assert await _send(process, right) == (429, {"error": "rate_limited"})
        later = EventReceiver(receiver.store, [SECRET.encode()], clock=lambda: NOW + timedelta(minutes=11))
        # The window passed: the code is looked at again (and has expired by now: codes live as long).
        assert await _send(later, right) == (400, {"error": "expired_link_code"})
    finally:
        await other_store.close()
