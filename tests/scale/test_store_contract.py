"""The store's contract: every typed method answers the same on SQLite and PostgreSQL, whichever path
the store picks (the loop-thread SQLite connection, plain asyncpg, or the SQLAlchemy engine).

Each test runs on both backends (`backend`), and opens the same database twice: once as the bot does
(fast paths on) and once with every unit on the engine (`fast_paths=False`); what one writes the other
reads back identically."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import bindparam, func, select

from bot.store import (
    AuditEntry,
    Coupon,
    CouponRow,
    DailyUsage,
    IssueFacts,
    IssueWrite,
    Order,
    Player,
    RaceLost,
    Run,
    Store,
)
from bot.store.threads import message_row
from tests.support.context import NOW
from tests.support.scale import seed_ledger
from tools.local_time import day_bounds

SEOUL = "Asia/Seoul"
DAY = day_bounds(NOW, SEOUL)

CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "lookup_order", "arguments": '{"order_id": "A"}'},
}


@dataclass
class Pair:
    fast: Store
    """The store as the bot opens it: the fastest path its backend has."""
    engine: Store
    """The same database with every unit on the SQLAlchemy engine."""

    def both(self) -> list[tuple[str, Store]]:
        return [("fast", self.fast), ("engine", self.engine)]


@pytest.fixture
async def pair(db_url: str) -> AsyncIterator[Pair]:
    fast = Store(db_url)
    await fast.open()
    await seed_ledger(fast)
    async with fast.session() as s:
        player = await s.get(Player, "P100")
        player.phone, player.email = "010-1234-5678", "luna@example.com"
        await s.commit()
    engine = Store(db_url, fast_paths=False)
    await engine.open()
    try:
        yield Pair(fast, engine)
    finally:
        await engine.close()
        await fast.close()


def _coupon(
    code: str, order_id: str, created_at: datetime, *, key: str | None = None, player: str = "P100"
) -> CouponRow:
    return CouponRow(
        id=None,
        code=code,
        order_id=order_id,
        player_id=player,
        amount=2000,
        status="active",
        reason=None,
        issued_by="staff:42",
        idempotency_key=key,
        created_at=created_at,
        expires_at=created_at + timedelta(days=30),
        revoked_at=None,
    )


def _audit(target: str) -> dict:
    return {
        "at": NOW,
        "actor": "staff:42",
        "thread_id": None,
        "action": "coupon.staff_issue",
        "target": target,
        "code": "ISSUED",
        "detail": "{}",
    }


async def _issue(
    store: Store, coupon: CouponRow | None, target: str, player: str | None = "P100"
) -> IssueFacts:
    """Write `coupon` (or only the audit row) through the issuance unit; returns the facts it saw."""

    def decide(facts: IssueFacts) -> IssueWrite[IssueFacts]:
        return IssueWrite(coupon, _audit(target), facts)

    key = coupon.idempotency_key if coupon else None
    return await store.coupons.issue(player_id=player, order_id=target, key=key, day=DAY, decide=decide)


async def _counts(store: Store) -> tuple[int, int]:
    async with store.session() as s:
        coupons = (await s.execute(select(func.count(Coupon.id)))).scalar_one()
        audits = (await s.execute(select(func.count(AuditEntry.id)))).scalar_one()
    return coupons, audits


async def test_the_fast_path_is_the_one_the_backend_has(pair: Pair, backend: str) -> None:
    assert (pair.fast.direct is not None) == (backend == "sqlite")
    assert (pair.fast.direct_pg is not None) == (backend == "postgresql")
    assert pair.engine.direct is None and pair.engine.direct_pg is None


async def test_issuance_facts_are_the_same_on_every_path_including_the_seoul_day_edges(pair: Pair) -> None:
    midnight = datetime(2026, 3, 1, 15, 0, tzinfo=UTC)  # 2026-03-02 00:00 in Seoul: counts for NOW's day
    before = midnight - timedelta(microseconds=1)  # the day before in Seoul: does not count
    await _issue(pair.fast, _coupon("ARCA-AAAA-AAAA", "ORD100", midnight, key="k1"), "ORD100")
    await _issue(pair.engine, _coupon("ARCA-BBBB-BBBB", "ORD101", before), "ORD101")

    seen = [await store.coupons.facts("ORD100", "k1", DAY) for _name, store in pair.both()]
    assert seen[0] == seen[1]
    facts = seen[0]
    assert facts.order_player_id == "P100" and facts.order_status == "delayed"
    assert facts.day == DailyUsage(count=1, amount=2000)
    assert facts.key_coupon == facts.live_coupon and facts.live_coupon.code == "ARCA-AAAA-AAAA"
    assert facts.live_coupon.created_at == midnight and facts.live_coupon.created_at.tzinfo is not None
    assert facts.live_coupon.expires_at == midnight + timedelta(days=30)

    missing = [await store.coupons.facts("NOPE", None, DAY) for _name, store in pair.both()]
    assert missing[0] == missing[1]
    assert (missing[0].order_player_id, missing[0].key_coupon, missing[0].live_coupon) == (None, None, None)
    assert missing[0].day == DailyUsage(count=0, amount=0)


async def test_the_issuance_unit_sees_its_facts_and_writes_coupon_and_audit_together(pair: Pair) -> None:
    for name, store in pair.both():
        order = "ORD001" if name == "fast" else "ORD003"
        player = "P100" if name == "fast" else "P200"
        coupon = _coupon(f"ARCA-{name[:4].upper()}-0000", order, NOW, key=f"key-{name}", player=player)
        seen = await _issue(store, coupon, order, player)
        assert seen.live_coupon is None and seen.order_player_id == player
    async with pair.fast.session() as s:
        coupons = list((await s.execute(select(Coupon).order_by(Coupon.id))).scalars())
        audits = list((await s.execute(select(AuditEntry).order_by(AuditEntry.id))).scalars())
    assert [(c.order_id, c.player_id, c.code, c.created_at) for c in coupons] == [
        ("ORD001", "P100", "ARCA-FAST-0000", NOW),
        ("ORD003", "P200", "ARCA-ENGI-0000", NOW),
    ]
    assert all(c.expires_at == NOW + timedelta(days=30) and c.revoked_at is None for c in coupons)
    assert [(a.action, a.target, a.at) for a in audits] == [
        ("coupon.staff_issue", "ORD001", NOW),
        ("coupon.staff_issue", "ORD003", NOW),
    ]


async def test_a_taken_idempotency_key_is_a_lost_race_that_writes_nothing_on_every_path(pair: Pair) -> None:
    await _issue(pair.fast, _coupon("ARCA-AAAA-AAAA", "ORD001", NOW, key="same"), "ORD001")
    before = await _counts(pair.fast)
    for name, store in pair.both():
        with pytest.raises(RaceLost):
            await _issue(store, _coupon(f"ARCA-{name[:4].upper()}-CCCC", "ORD100", NOW, key="same"), "ORD100")
        assert await _counts(store) == before, name
    # The connection the failed transaction ran on is usable again.
    facts = await _issue(pair.fast, None, "ORD001")
    assert facts.live_coupon is not None and facts.live_coupon.code == "ARCA-AAAA-AAAA"


async def test_a_thread_written_on_one_path_loads_identically_on_the_other(pair: Pair) -> None:
    rows = [
        {"role": "user", "content": "주문 A 어디 있어요?", "pinned": True},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "name": "lookup_order", "content": "OK 배송 중"},
        {"role": "assistant", "content": "배송 중입니다."},
    ]
    for name, store in pair.both():
        ids = await store.threads.append(
            [message_row(f"t:{name}", m, run_id="r1", pinned=False, kind=None) for m in rows]
        )
        assert ids == sorted(ids) and len(set(ids)) == 4
    for name, _store in pair.both():
        loaded = [await store.threads.load(f"t:{name}") for _n, store in pair.both()]
        assert loaded[0] == loaded[1]
        messages = loaded[0].messages
        assert [{k: v for k, v in m.items() if k != "_id"} for m in messages] == [
            {"role": "user", "content": "주문 A 어디 있어요?", "pinned": True},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "c1", "name": "lookup_order", "content": "OK 배송 중"},
            {"role": "assistant", "content": "배송 중입니다."},
        ]
        assert loaded[0].summary is None


async def test_summary_and_reset_move_where_every_path_starts_the_thread(pair: Pair) -> None:
    ids = await pair.fast.threads.append(
        [
            message_row(
                "t:1", {"role": "user", "content": f"메시지 {i}"}, run_id=None, pinned=False, kind="query"
            )
            for i in range(4)
        ]
    )
    await pair.engine.threads.save_summary("t:1", ids[1], "요약: 앞의 두 메시지")
    for _name, store in pair.both():
        loaded = await store.threads.load("t:1")
        assert loaded.summary == "요약: 앞의 두 메시지"
        assert [m["content"] for m in loaded.messages] == ["메시지 2", "메시지 3"]
    await pair.fast.threads.reset("t:1")
    for _name, store in pair.both():
        loaded = await store.threads.load("t:1")
        assert (loaded.summary, loaded.messages) == (None, [])
        assert await store.threads.recent("t:1") == []
    after = await pair.fast.threads.append(
        [
            message_row(
                "t:1", {"role": "user", "content": f"새 메시지 {i}"}, run_id=None, pinned=False, kind="query"
            )
            for i in range(3)
        ]
    )
    for _name, store in pair.both():  # after a reset: the messages after it, no summary yet
        assert [m["content"] for m in (await store.threads.load("t:1")).messages] == [
            "새 메시지 0",
            "새 메시지 1",
            "새 메시지 2",
        ]
    await pair.engine.threads.save_summary("t:1", after[0], "요약: 리셋 뒤 첫 메시지")
    for _name, store in pair.both():  # the newest summary after the reset point starts the thread again
        loaded = await store.threads.load("t:1")
        assert loaded.summary == "요약: 리셋 뒤 첫 메시지"
        assert [(m["content"], m["_id"]) for m in loaded.messages] == [
            ("새 메시지 1", after[1]),
            ("새 메시지 2", after[2]),
        ]


async def test_the_newest_messages_since_the_reset_read_the_same_on_every_path(pair: Pair) -> None:
    def row(i: int, run: str, kind: str) -> dict:
        return message_row(
            "t:since", {"role": "user", "content": f"m{i}"}, run_id=run, pinned=False, kind=kind
        )

    await pair.fast.threads.append([row(0, "r0", "query"), row(1, "r0", "observation")])
    await pair.fast.threads.reset("t:since")
    await pair.fast.threads.append(
        [row(i, f"r{i}", "query" if i % 2 else "observation") for i in range(2, 7)]
    )
    for _name, store in pair.both():
        rows = await store.threads.since_reset("t:since", 3)
        assert [(r.content, r.run_id, r.meta) for r in rows] == [
            ("m4", "r4", {"kind": "observation"}),
            ("m5", "r5", {"kind": "query"}),
            ("m6", "r6", {"kind": "observation"}),
        ]
        assert [r.content for r in await store.threads.since_reset("t:since", 400)] == [
            f"m{i}" for i in range(2, 7)
        ]
        assert await store.threads.since_reset("t:nothing", 10) == []


async def test_a_paused_thread_is_paused_on_every_path(pair: Pair) -> None:
    for _name, store in pair.both():
        assert await store.threads.is_paused("t:pause") is False
    await pair.engine.threads.set_paused("t:pause", True, by="staff:42")
    assert [await store.threads.is_paused("t:pause") for _n, store in pair.both()] == [True, True]
    await pair.fast.threads.set_paused("t:pause", False, by="staff:42")
    assert [await store.threads.is_paused("t:pause") for _n, store in pair.both()] == [False, False]
    actions = [a.action for a in reversed(await pair.fast.recent_audit(2))]
    assert actions == ["handoff", "resume"]


async def test_the_player_behind_a_discord_id_and_their_contacts(pair: Pair) -> None:
    for _name, store in pair.both():
        assert await store.players.id_for_discord("9001") == "P100"
        assert await store.players.id_for_discord("0000") is None
        contacts = await store.players.contacts("P100")
        assert (contacts.phones, contacts.emails) == (("010-1234-5678",), ("luna@example.com",))
        assert (await store.players.contacts("P200")).phones == ()


_ORDERS_OF = (
    select(Order.id, Order.status, Order.ordered_at)
    .where(Order.player_id == bindparam("player", None), Order.status.in_(("delayed", "delivered")))
    .order_by(Order.id)
    .limit(3)
)


async def test_fetch_insert_rows_and_audit_agree_on_every_path(pair: Pair) -> None:
    fetched = [await store.fetch(_ORDERS_OF, player="P100") for _n, store in pair.both()]
    assert [tuple(r) for r in fetched[0]] == [tuple(r) for r in fetched[1]]
    assert [r.id for r in fetched[0]] == ["ORD001", "ORD002", "ORD100"]
    for name, store in pair.both():
        at = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)
        run = {
            "run_id": f"run-{name}",
            "thread_id": "t:1",
            "player": "player:P100",
            "started_at": at,
            "answered_at": at,
        }
        await store.insert_rows([(Run.__table__, [run])])
        await store.audit(actor="staff:42", action=f"test.{name}", detail={"이유": "계약"})
    async with pair.fast.session() as s:
        runs = list((await s.execute(select(Run).order_by(Run.run_id))).scalars())
    assert [(r.run_id, r.locale, r.answered_at) for r in runs] == [
        ("run-engine", "ko", NOW),
        ("run-fast", "ko", NOW),
    ]
    audits = list(reversed(await pair.engine.recent_audit(2)))
    assert [(a.action, a.detail) for a in audits] == [
        ("test.fast", '{"이유": "계약"}'),
        ("test.engine", '{"이유": "계약"}'),
    ]


async def test_an_order_with_its_live_coupon_reads_the_same_on_every_path(pair: Pair) -> None:
    await _issue(pair.fast, _coupon("ARCA-LIVE-0001", "ORD100", NOW), "ORD100")
    for name, store in pair.both():
        order = await store.orders.with_live_coupon("ORD100")
        assert order is not None, name
        assert (order.id, order.player_id, order.status) == ("ORD100", "P100", "delayed")
        assert order.ordered_at is not None and order.ordered_at.tzinfo is not None
        coupon = order.live_coupon
        assert coupon is not None and (coupon.code, coupon.amount, coupon.status) == (
            "ARCA-LIVE-0001",
            2000,
            "active",
        )
        assert coupon.expires_at == NOW + timedelta(days=30)
        plain = await store.orders.with_live_coupon("ORD001")
        assert plain is not None and plain.live_coupon is None
        assert await store.orders.with_live_coupon("NOPE") is None


async def test_the_active_coupons_a_claim_names_read_the_same_on_every_path(pair: Pair) -> None:
    await _issue(pair.fast, _coupon("ARCA-ACTV-0001", "ORD100", NOW), "ORD100")
    await _issue(pair.engine, _coupon("ARCA-ACTV-0002", "ORD101", NOW), "ORD101")
    for name, store in pair.both():
        found = await store.coupons.active(orders=["ORD100", "ORD100"], codes=["ARCA-ACTV-0002", "NOPE"])
        assert sorted((c.order_id, c.amount, c.code) for c in found) == [
            ("ORD100", 2000, "ARCA-ACTV-0001"),
            ("ORD101", 2000, "ARCA-ACTV-0002"),
        ], name
        assert await store.coupons.active() == []
        assert await store.coupons.active(orders=["ORD001"]) == []


async def test_the_open_incidents_a_player_sees_read_the_same_on_every_path(pair: Pair) -> None:
    """Every run reads them (their notices ride in the prompt): all players, a list, an order filter."""
    from bot.store.incident_scope import IncidentScope

    def declare(title: str, scope: IncidentScope):
        return pair.engine.incidents.open(
            title=title, notice_ko=title, notice_en=title, scope=scope, actor="staff:42", now=NOW
        )

    everyone = await declare("all", IncidentScope())
    listed = await declare("listed", IncidentScope("players", player_ids=("P200",)))
    delayed_goods = await declare("goods", IncidentScope("orders", statuses=("delayed",), item="한정판"))
    closed = await declare("closed", IncidentScope())
    await pair.engine.incidents.close(closed.id, actor="staff:42", now=NOW)
    for _name, store in pair.both():
        assert [i.id for i in await store.incidents.open_for("P100")] == [delayed_goods.id, everyone.id]
        assert [i.id for i in await store.incidents.open_for("P200")] == [listed.id, everyone.id]
        assert [i.id for i in await store.incidents.open_for(None)] == [everyone.id]
        [record] = [i for i in await store.incidents.open_for("P100") if i.id == delayed_goods.id]
        assert record.scope == delayed_goods.scope and record.started_at == delayed_goods.started_at
