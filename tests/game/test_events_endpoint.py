"""`POST /game/v1/events` over real HTTP (DESIGN.md §11.3): each bad input refused with its answer,
replays and out-of-order orders recognised, rotation, nothing half-applied, the secret never shown."""

from __future__ import annotations

import asyncio
import json
import logging
import time

from sqlalchemy import func, select

from bot.store import AuditEntry, Order, Player
from bot.store.game_events import GameEvent
from tests.support.game_events import (
    NEXT_SECRET,
    SECRET,
    EventsServer,
    event,
    order,
    start_events_server,
    stop_events_server,
)


async def _order(events: EventsServer, order_id: str) -> Order | None:
    async with events.store.session() as s:
        return await s.get(Order, order_id)


async def _count(events: EventsServer, model) -> int:
    async with events.store.session() as s:
        return int((await s.execute(select(func.count()).select_from(model))).scalar_one())


async def test_a_signed_order_event_is_applied_and_a_replay_is_a_duplicate(events):
    body = event("order.upserted", order(updated_at="2026-12-06T12:00:00+00:00"), "evt_1")

    first = await events.post(body)
    again = await events.post(body)

    assert (first.status_code, first.json()) == (200, {"status": "applied"})
    assert (again.status_code, again.json()) == (200, {"status": "duplicate"})
    stored = await _order(events, "ORD777")
    assert stored is not None and stored.status == "shipping" and stored.amount == 33000
    assert stored.updated_at.isoformat() == "2026-12-06T12:00:00+00:00"


async def test_an_older_order_event_is_stale_and_changes_nothing(events):
    newer = event("order.upserted", order(updated_at="2026-12-06T12:00:00+00:00", status="delivered"))
    older = event("order.upserted", order(updated_at="2026-12-06T11:59:59+00:00", status="paid"))
    same = event("order.upserted", order(updated_at="2026-12-06T21:00:00+09:00", status="refunded"))

    assert (await events.post(newer)).json() == {"status": "applied"}
    assert (await events.post(older)).json() == {"status": "stale"}
    assert (await events.post(same)).json() == {"status": "stale"}, "as new is not newer"
    assert (await _order(events, "ORD777")).status == "delivered"


async def test_an_order_event_for_an_unknown_player_creates_the_player(events):
    answer = await events.post(
        event("order.upserted", order("ORD900", updated_at="2026-12-06T12:00:00Z", player="P900"))
    )

    assert answer.json() == {"status": "applied"}
    async with events.store.session() as s:
        assert (await s.get(Player, "P900")) is not None


async def test_player_event_creates_then_renames_and_keeps_the_link(events):
    async with events.store.session() as s:
        linked_before = (await s.get(Player, "P100")).discord_id

    created = await events.post(event("player.upserted", {"id": "P555", "name": "별빛", "locale": "ko"}))
    renamed = await events.post(event("player.upserted", {"id": "P100", "name": "루나2", "locale": "en"}))

    assert created.json() == renamed.json() == {"status": "applied"}
    async with events.store.session() as s:
        assert (await s.get(Player, "P555")).name == "별빛"
        p100 = await s.get(Player, "P100")
        assert (p100.name, p100.locale, p100.discord_id) == ("루나2", "en", linked_before)


async def test_missing_wrong_and_stale_signatures_are_401_and_apply_nothing(events):
    body = event("order.upserted", order(updated_at="2026-12-06T12:00:00+00:00"))
    answers = {
        "missing": await events.post(body, secret=None),
        "wrong secret": await events.post(body, secret="not-the-secret"),
        "stale": await events.post(body, timestamp=int(time.time()) - 301),
        # Well past the tolerance: a busy machine may take a second or more to check it.
        "future": await events.post(body, timestamp=int(time.time()) + 330),
        "garbled": await events.post(body, header="v1=abc"),
    }
    tampered_raw = json.dumps(body).encode()
    from bot.game.events import signature_header

    header = signature_header(SECRET.encode(), tampered_raw)
    answers["tampered body"] = await events.post(tampered_raw.replace(b"33000", b"99000"), header=header)
    answers["uppercase hex"] = await events.post(
        tampered_raw, header=header.split("v1=")[0] + "v1=" + header.split("v1=")[1].upper()
    )

    for what, answer in answers.items():
        assert answer.status_code == 401, what
        assert set(answer.json()) == {"error"}, what
    assert answers["missing"].json() == {"error": "signature_missing"}
    assert answers["stale"].json() == {"error": "timestamp_out_of_tolerance"}
    assert answers["wrong secret"].json() == {"error": "signature_mismatch"}
    assert await _order(events, "ORD777") is None
    assert await _count(events, GameEvent) == 0


async def test_a_timestamp_within_tolerance_is_accepted(events):
    body = event("player.upserted", {"id": "P556", "name": "a", "locale": "ko"})

    answer = await events.post(body, timestamp=int(time.time()) - 290)

    assert answer.json() == {"status": "applied"}


async def test_unknown_type_and_malformed_bodies_are_400_with_a_reason(events):
    cases = {
        b"{not json": "malformed_body",
        b"[1, 2]": "malformed_body",
        b"\xff\xfe": "malformed_body",
        json.dumps({"id": "e1", "type": "order.upserted"}).encode(): "malformed_body",
        json.dumps(event("order.deleted", {"id": "ORD001"})).encode(): "unknown_event_type",
        json.dumps(event("order.upserted", {**order(updated_at="2026-12-06T12:00:00"), "x": 1})).encode(): (
            "malformed_body"  # a time without its offset
        ),
        json.dumps(
            event("order.upserted", order(updated_at="2026-12-06T12:00:00Z", status="lost"))
        ).encode(): ("malformed_body"),
        json.dumps(event("player.upserted", {"id": "P1\u0000", "name": "n"})).encode(): "malformed_body",
        json.dumps(event("account.link", {"player_id": "P100"})).encode(): "malformed_body",
    }
    for raw, reason in cases.items():
        answer = await events.post(raw)
        assert answer.status_code == 400, raw
        assert answer.json()["error"] == reason, raw
    bad_time = await events.post(
        event("order.upserted", order(updated_at="2026-12-06T12:00:00")), secret=SECRET
    )
    assert bad_time.json() == {"error": "malformed_body", "field": "data.updated_at"}
    assert await _count(events, GameEvent) == 0


async def test_a_body_over_one_mebibyte_is_413_before_it_is_read(events):
    padding = "x" * (1024 * 1024)
    body = event("player.upserted", {"id": "P557", "name": "big", "locale": "ko", "bio": padding})

    answer = await events.post(body)

    assert answer.status_code == 413
    assert answer.json()["error"] == "body_too_large"
    async with events.store.session() as s:
        assert await s.get(Player, "P557") is None


async def test_a_body_just_under_the_limit_is_taken(events):
    body = event("player.upserted", {"id": "P558", "name": "big", "locale": "ko", "bio": ""})
    room = 1024 * 1024 - len(json.dumps(body).encode()) - 16
    body["data"]["bio"] = "x" * room

    assert (await events.post(body)).json() == {"status": "applied"}


async def test_during_rotation_both_secrets_are_accepted_and_the_old_one_is_dropped_after(
    seeded_store, tmp_path
):
    both = await start_events_server(seeded_store, tmp_path, secret=f"{SECRET}, {NEXT_SECRET}")
    try:
        old = await both.post(event("player.upserted", {"id": "P560", "name": "a"}), secret=SECRET)
        new = await both.post(event("player.upserted", {"id": "P561", "name": "b"}), secret=NEXT_SECRET)
        assert old.json() == new.json() == {"status": "applied"}
    finally:
        await stop_events_server(both)
    after = await start_events_server(seeded_store, tmp_path, secret=NEXT_SECRET)
    try:
        refused = await after.post(event("player.upserted", {"id": "P562", "name": "c"}), secret=SECRET)
        assert refused.status_code == 401
    finally:
        await stop_events_server(after)


async def test_without_a_secret_the_endpoint_does_not_exist(seeded_store, tmp_path):
    off = await start_events_server(seeded_store, tmp_path, secret=None)
    try:
        answer = await off.post(event("player.upserted", {"id": "P563", "name": "a"}), secret="anything")
        assert answer.status_code == 404
    finally:
        await stop_events_server(off)


async def test_no_session_or_csrf_is_needed_but_a_browser_page_cannot_use_it_unsigned(events):
    body = event("player.upserted", {"id": "P564", "name": "a"})
    cross_site = {"Origin": "https://evil.example", "Cookie": "arca_staff=whatever"}

    unsigned = await events.post(body, secret=None, headers=cross_site)
    signed = await events.post(body, headers=cross_site)

    assert unsigned.status_code == 401
    assert signed.json() == {"status": "applied"}


async def test_a_failure_inside_the_event_leaves_nothing_half_applied(events, monkeypatch):
    import bot.game.events as events_module

    real = events_module.order_event_unit

    def write_then_fail(event_id, facts, now):
        yield from real(event_id, facts, now)  # the order and the event's id are written…
        raise RuntimeError("the disk went away")  # …and then the event fails

    monkeypatch.setattr(events_module, "order_event_unit", write_then_fail)
    async with events.client() as client:
        body = event("order.upserted", order(updated_at="2026-12-06T12:00:00Z"), "evt_half")
        from bot.game.events import signature_header

        raw = json.dumps(body).encode()
        answer = await client.post(
            "/game/v1/events",
            content=raw,
            headers={"X-Arca-Signature": signature_header(SECRET.encode(), raw)},
        )
    assert answer.status_code == 500
    assert await _order(events, "ORD777") is None
    assert await _count(events, GameEvent) == 0
    monkeypatch.setattr(events_module, "order_event_unit", real)
    assert (await events.post(body)).json() == {"status": "applied"}, "the game's retry applies it once"


async def test_the_same_event_delivered_twice_at_once_is_applied_once(events):
    body = event("order.upserted", order(updated_at="2026-12-06T12:00:00Z"), "evt_race")

    answers = await asyncio.gather(*(events.post(body) for _ in range(4)))

    statuses = sorted(a.json()["status"] for a in answers)
    assert statuses == ["applied", "duplicate", "duplicate", "duplicate"]
    assert await _count(events, GameEvent) == 1


async def test_an_applied_order_event_drops_the_order_from_the_source_cache(seeded_store, tmp_path):
    forgotten: list[str] = []

    async def forget(order_id: str) -> None:
        forgotten.append(order_id)

    server = await start_events_server(seeded_store, tmp_path, forget_order=forget)
    try:
        await server.post(event("order.upserted", order(updated_at="2026-12-06T12:00:00Z")))
        await server.post(event("order.upserted", order(updated_at="2026-12-06T11:00:00Z")))
    finally:
        await stop_events_server(server)
    assert forgotten == ["ORD777"], "once, for the applied event only"


async def test_the_secret_is_never_in_logs_or_answers(events, caplog):
    caplog.set_level(logging.DEBUG)
    body = event("order.upserted", order(updated_at="2026-12-06T12:00:00Z"))
    answers = [
        await events.post(body, secret="wrong-secret"),
        await events.post(body, timestamp=0),
        await events.post(b"{broken"),
        await events.post(body),
        await events.post(body),
    ]

    shown = (
        caplog.text
        + "".join(a.text for a in answers)
        + repr(events.deps)
        + repr(events.server.app.state.game_events)
    )
    assert SECRET not in shown
    assert SECRET.encode().hex() not in shown
    async with events.store.session() as s:
        audit = " ".join(str(r.detail) for r in (await s.execute(select(AuditEntry))).scalars())
    assert SECRET not in audit
