"""The loop-thread SQLite path (`bot.store.backends.sqlite_direct`): same rows as the engine writes, never a blocked loop."""

from __future__ import annotations

import asyncio
import itertools
import time
from datetime import datetime

import pytest
from sqlalchemy import select

from bot.loop_share import background_work
from bot.memory import ThreadMemory
from bot.store import Store, ThreadMessage

CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "lookup_order", "arguments": '{"order_id": "A"}'},
}


async def _write_thread(memory: ThreadMemory, thread: str) -> None:
    await memory.append(thread, {"role": "user", "content": "주문 A 어디 있어요?"}, pinned=True, kind="query")
    await memory.append_many(
        thread,
        [
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "c1", "name": "lookup_order", "content": "OK 배송 중"},
        ],
        run_id="r1",
        kind="tool",
    )
    await memory.append_assistant(thread, "배송 중입니다.", run_id="r1")


async def test_direct_rows_read_back_identically_through_the_engine_path(store: Store) -> None:
    assert store.direct is not None  # a file database gets the loop-thread connection
    memory = ThreadMemory(store)
    await _write_thread(memory, "t:direct")
    direct = store.direct
    loaded_direct = await memory.load("t:direct")
    store.direct = None  # the SQLAlchemy Core path (PostgreSQL, in-memory SQLite) on the same rows
    try:
        await _write_thread(memory, "t:core")
        loaded_core = await memory.load("t:direct")
        core_rows = await memory.load("t:core")
    finally:
        store.direct = direct
    assert loaded_direct == loaded_core
    strip = [{k: v for k, v in m.items() if k != "_id"} for m in loaded_direct]
    assert strip == [{k: v for k, v in m.items() if k != "_id"} for m in core_rows]
    assert loaded_direct[0] == {"role": "user", "content": "주문 A 어디 있어요?", "pinned": True, "_id": 1}
    assert loaded_direct[1]["tool_calls"] == [CALL]
    async with store.session() as s:
        rows = {
            r.thread_id + ":" + r.role: r
            for r in (await s.execute(select(ThreadMessage).order_by(ThreadMessage.id))).scalars()
        }
    for side in ("t:direct", "t:core"):
        assert isinstance(rows[f"{side}:user"].created_at, datetime)
        assert rows[f"{side}:user"].created_at.tzinfo is not None
        assert rows[f"{side}:user"].meta == {"kind": "query"}
        assert rows[f"{side}:tool"].run_id == "r1"
    assert [m.content for m in await memory.recent("t:direct")] == ["주문 A 어디 있어요?", "배송 중입니다."]


async def test_a_held_write_lock_makes_the_write_wait_without_blocking_the_loop(store: Store) -> None:
    memory = ThreadMemory(store)
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.005)

    tick_task = asyncio.create_task(ticker())
    try:
        async with store.engine.connect() as holder:  # another connection takes the write lock
            await holder.exec_driver_sql("BEGIN IMMEDIATE")
            write = asyncio.create_task(memory.append("t:lock", {"role": "user", "content": "hi"}))
            await asyncio.sleep(0.3)
            assert not write.done()  # waiting for the lock, retrying …
            await holder.exec_driver_sql("COMMIT")
        message_id = await asyncio.wait_for(write, 5)
    finally:
        tick_task.cancel()
    assert message_id == 1
    assert [m["content"] for m in await memory.load("t:lock")] == ["hi"]
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert len(ticks) > 20 and max(gaps) < 0.25  # … while the loop kept running


async def test_in_memory_sqlite_has_no_direct_path() -> None:
    store = Store("sqlite+aiosqlite:///:memory:")
    await store.open()
    try:
        assert store.direct is None
        memory = ThreadMemory(store)
        await memory.append("t", {"role": "user", "content": "x"})
        assert [m["content"] for m in await memory.load("t")] == ["x"]
    finally:
        await store.close()


async def test_audit_rows_written_on_the_loop_thread_read_back_through_the_orm(store: Store) -> None:
    assert store.direct is not None
    await store.audit(actor="bot", action="tool:lookup_order", thread_id="t1", code="OK", detail={"a": "가"})
    direct = store.direct
    store.direct = None
    try:
        await store.audit(
            actor="bot", action="tool:lookup_order", thread_id="t1", code="OK", detail={"a": "가"}
        )
    finally:
        store.direct = direct
    core_row, direct_row = await store.recent_audit(2)  # newest first
    for entry in (direct_row, core_row):
        assert (entry.actor, entry.action, entry.thread_id, entry.code) == (
            "bot",
            "tool:lookup_order",
            "t1",
            "OK",
        )
        assert entry.detail == '{"a": "가"}'
        assert entry.at.tzinfo is not None
    assert direct_row.id == 1 and core_row.id == 2


async def test_the_wal_is_checkpointed_off_the_loop_thread(store: Store, monkeypatch, tmp_path) -> None:
    from bot.store.backends import sqlite_direct as direct_module

    monkeypatch.setattr(direct_module, "CHECKPOINT_EVERY", 4)
    assert store.direct is not None
    assert store.direct.connection.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    db = tmp_path / "arca.db"
    before = db.stat().st_size
    memory = ThreadMemory(store)
    for i in range(3):
        await memory.append("t:big", {"role": "user", "content": "가" * 100_000 + str(i)})
    assert store.direct._checkpoint is None and db.stat().st_size == before  # all of it still in the WAL
    await memory.append("t:big", {"role": "user", "content": "last"})
    assert store.direct._checkpoint is not None
    await store.direct._checkpoint
    assert db.stat().st_size > before + 3 * 300_000  # copied into the database file by the worker
    assert len(await memory.load("t:big")) == 4


async def test_a_write_waiting_for_the_lock_does_not_hold_up_reads_or_other_units(
    seeded_store: Store,
) -> None:
    from bot.store import Order

    store = seeded_store
    memory = ThreadMemory(store)
    async with store.engine.connect() as holder:  # another connection takes the write lock
        await holder.exec_driver_sql("BEGIN IMMEDIATE")
        waiting = asyncio.create_task(memory.append("t:wait", {"role": "user", "content": "hi"}))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # retrying, its connection idle between attempts …
        # … so reads on the same connection go ahead at once instead of queueing behind it.
        query = select(Order.id, Order.status).where(Order.id == "ORD001")
        (order,) = await asyncio.wait_for(store.fetch(query), 0.2)
        assert order.id == "ORD001"
        assert await asyncio.wait_for(memory.load("t:other"), 0.2) == []
        await holder.exec_driver_sql("COMMIT")
    assert await asyncio.wait_for(waiting, 5) == 1


async def test_compiled_reads_on_the_loop_thread_equal_the_engine_path(seeded_store: Store) -> None:
    from sqlalchemy import and_, bindparam

    from bot.store import Coupon, Order, Player

    query = (
        select(Order.id, Order.ordered_at, Player.phone, Player.email, Coupon.code, Coupon.expires_at)
        .join(Player, Player.id == Order.player_id)
        .outerjoin(Coupon, and_(Coupon.order_id == Order.id, Coupon.status.in_(("active", "pending"))))
        .where(Order.player_id == bindparam("player", None))
        .order_by(Order.id)
    )
    store = seeded_store
    assert store.direct is not None
    by_direct = await store.fetch(query, player="P100")
    direct, store.direct = store.direct, None  # the engine path (PostgreSQL, in-memory SQLite)
    try:
        by_engine = await store.fetch(query, player="P100")
    finally:
        store.direct = direct
    assert [tuple(r) for r in by_direct] == [tuple(r) for r in by_engine]
    assert len(by_direct) >= 2 and by_direct[0].id == "ORD001" and by_direct[0].phone == "010-1234-5678"
    assert by_direct[0].ordered_at.tzinfo is not None  # dates come back as the ORM returns them
    assert await store.fetch(query, player="nobody") == []


async def test_insert_rows_is_one_transaction_on_both_paths(store: Store) -> None:
    from datetime import UTC

    from bot.store import RaceLost, Run, RunToolCall

    duplicate = RaceLost  # the store's one answer to a unique-constraint hit, on every path

    at = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)

    def run(run_id: str) -> dict:
        return {"run_id": run_id, "thread_id": "t", "player": "p", "started_at": at, "answered_at": at}

    calls = [{"run_id": "r1", "at": at, "tool": "lookup_order", "code": "OK", "ok": True}]
    await store.insert_rows([(Run.__table__, [run("r1")]), (RunToolCall.__table__, calls)])
    direct, store.direct = store.direct, None
    try:
        await store.insert_rows([(Run.__table__, [run("r2")]), (RunToolCall.__table__, [])])
        with pytest.raises(duplicate):  # a duplicate run id: nothing of this call is kept
            await store.insert_rows([(RunToolCall.__table__, calls), (Run.__table__, [run("r2")])])
    finally:
        store.direct = direct
    with pytest.raises(duplicate):
        await store.insert_rows([(RunToolCall.__table__, calls), (Run.__table__, [run("r1")])])
    async with store.session() as s:
        runs = (await s.execute(select(Run).order_by(Run.run_id))).scalars().all()
        tool_calls = (await s.execute(select(RunToolCall))).scalars().all()
    assert [r.run_id for r in runs] == ["r1", "r2"]
    assert runs[0].answered_at == at and runs[0].locale == "ko"  # column defaults applied on the direct path
    assert [(c.run_id, c.tool, c.ok) for c in tool_calls] == [("r1", "lookup_order", True)]


def test_the_startup_heap_is_frozen_once_and_later_objects_stay_collectable() -> None:
    import gc
    import weakref

    from bot.heap import freeze_startup_heap

    gc.unfreeze()
    startup = [[i] for i in range(1000)]  # tracked containers alive at start-up
    freeze_startup_heap()
    frozen = gc.get_freeze_count()
    assert frozen >= len(startup)
    later = [[i] for i in range(1000)]

    class Node:
        """An object the collector must still free when it only lives in a cycle."""

    node = Node()
    node.me = node  # a reference cycle only the collector frees
    alive = weakref.ref(node)
    freeze_startup_heap()  # a second app in the same process freezes nothing more
    # Frozen start-up objects that die meanwhile (other threads) lower the count; a second freeze raises it.
    assert gc.get_freeze_count() < frozen + len(later)
    del node
    gc.collect()
    assert alive() is None, "an object made after start-up is still collected"


async def test_writes_handed_over_together_commit_together_and_a_failing_one_alone_is_rolled_back(
    store: Store,
) -> None:
    import sqlite3

    direct = store.direct
    assert direct is not None
    direct.connection.execute("CREATE TABLE IF NOT EXISTS t_group (k TEXT PRIMARY KEY, n INTEGER)")

    def put(key: str, n: int):
        def unit(conn: sqlite3.Connection) -> int:
            conn.execute("INSERT INTO t_group VALUES (?, ?)", (key, n))
            # Each unit sees the units before it in the same transaction (a ledger check stays serial).
            return conn.execute("SELECT count(*) FROM t_group").fetchone()[0]

        return direct.write(unit)

    # Handed over together while background work runs (a burst: no write runs on the loop's thread): run
    # in order on the writer thread, each seeing the ones before it.
    with background_work():
        results = await asyncio.gather(
            put("a", 1), put("b", 2), put("a", 3), put("c", 4), put("d", 5), return_exceptions=True
        )
    assert results[:2] == [1, 2] and results[3:] == [3, 4]
    assert isinstance(results[2], sqlite3.IntegrityError)  # the duplicate alone fails …
    rows = direct.connection.execute("SELECT k, n FROM t_group ORDER BY k").fetchall()
    assert rows == [("a", 1), ("b", 2), ("c", 4), ("d", 5)]  # … the others are committed, once
    assert not direct.connection.in_transaction
    with pytest.raises(sqlite3.IntegrityError):
        await put("b", 6)


async def _store_with_scratch_table(tmp_path, table: str) -> Store:
    """A file store with a scratch table `table` of (k, the name of the thread that wrote the row)."""
    store = Store(f"sqlite+aiosqlite:///{tmp_path / (table + '.db')}")
    await store.open(create=True)
    assert store.direct is not None
    store.direct.connection.execute(f"CREATE TABLE {table} (k INTEGER PRIMARY KEY, thread TEXT)")
    return store


async def test_close_commits_every_write_handed_over_or_waiting_for_the_next_turn(tmp_path) -> None:
    import sqlite3
    import threading

    store = await _store_with_scratch_table(tmp_path, "t_w")
    direct = store.direct
    assert direct is not None

    def put(k: int):
        def unit(conn: sqlite3.Connection) -> str:
            name = threading.current_thread().name
            conn.execute("INSERT INTO t_w VALUES (?, ?)", (k, name))
            return name

        return asyncio.ensure_future(direct.write(unit))

    loop_thread = threading.current_thread().name
    busy = background_work()
    busy.__enter__()  # background threads at work: no write is committed inline
    first = await put(0)
    assert first == loop_thread  # … but in the loop's next turn, with the others of its turn

    def count(conn: sqlite3.Connection) -> tuple[str, int]:
        return threading.current_thread().name, conn.execute("SELECT count(*) FROM t_w").fetchone()[0]

    # A long read runs on the reader thread, on its own connection, and sees what was committed.
    reader, seen = await direct.read_off_loop(count)
    assert reader.startswith("arca-sqlite-reader") and seen == 1
    handed = [put(k) for k in range(1, 50)]
    await asyncio.sleep(0)  # every unit waits for the loop's next turn …
    assert not any(h.done() for h in handed)
    busy.__exit__(None, None, None)
    await store.close()  # … and is committed before close returns (by the writer thread)
    check = sqlite3.connect(str(tmp_path / "t_w.db"))
    try:
        assert check.execute("SELECT count(*) FROM t_w").fetchone() == (50,)
    finally:
        check.close()
    assert await asyncio.gather(*handed) == ["arca-sqlite-writer"] * 49  # and each caller gets its result
    with pytest.raises(RuntimeError):
        await direct.write(lambda conn: None)
    with pytest.raises(RuntimeError):
        await direct.read_off_loop(count)


async def test_a_lone_write_commits_at_once_and_others_in_the_next_turn_together_unless_the_writer_has_some(
    tmp_path, monkeypatch
) -> None:
    import sqlite3
    import threading

    from bot.store.backends import sqlite_writer

    store = await _store_with_scratch_table(tmp_path, "t_i")
    direct = store.direct
    assert direct is not None
    loop_thread = threading.current_thread().name

    def put(k: int):
        def unit(conn: sqlite3.Connection) -> str:
            conn.execute("INSERT INTO t_i VALUES (?, ?)", (k, threading.current_thread().name))
            return threading.current_thread().name

        return asyncio.ensure_future(direct.write(unit))

    def rows() -> list[tuple[int, str]]:
        return direct.connection.execute("SELECT k, thread FROM t_i ORDER BY rowid").fetchall()

    def commits() -> int:
        return direct.counts()[1]

    holder = sqlite3.connect(str(tmp_path / "t_i.db"), isolation_level=None)
    try:
        # Alone: committed on the loop's thread before the write returns, without a turn of the loop.
        lone = put(1)
        await asyncio.sleep(0)
        assert lone.done() and lone.result() == loop_thread and rows() == [(1, loop_thread)]
        # A background thread at work: the writes of a turn wait for the next one and commit together there.
        before = commits()
        with background_work():
            together = [put(2), put(3), put(4)]
            await asyncio.sleep(0)
            assert rows() == [(1, loop_thread)]
            assert await asyncio.gather(*together) == [loop_thread] * 3
        assert commits() == before + 1
        # Another connection holds the write lock: the group goes to the writer thread, which waits for
        # it; a write asked for meanwhile queues behind it there, so the order holds.
        holder.execute("BEGIN IMMEDIATE")
        with background_work():
            held = put(5)
            await asyncio.sleep(0.05)
        after = put(6)
        await asyncio.sleep(0.05)
        assert not held.done() and not after.done() and [k for k, _ in rows()] == [1, 2, 3, 4]
        holder.execute("COMMIT")
        assert await held == await after == "arca-sqlite-writer"
        assert [k for k, _ in rows()] == [1, 2, 3, 4, 5, 6]
        # The writer idle again: inline again.
        assert await put(7) == loop_thread
        # A failing unit raises to its caller and stores nothing, inline as in a group.
        with pytest.raises(sqlite3.IntegrityError):
            await put(7)
        with background_work():
            failing = await asyncio.gather(put(8), put(7), put(9), return_exceptions=True)
        assert failing[0] == failing[2] == loop_thread and isinstance(failing[1], sqlite3.IntegrityError)
        assert not direct.connection.in_transaction and [k for k, _ in rows()] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
        # Writes that arrive in one loop turn (runs answered together) are inline until the turn has spent
        # INLINE_TURN_S on them; the turn's next ones are committed together in the next turn.
        monkeypatch.setattr(sqlite_writer, "INLINE_TURN_S", 1e-9)
        before = commits()
        assert await asyncio.gather(put(10), put(11), put(12)) == [loop_thread] * 3
        assert commits() == before + 2
        # At most LOOP_GROUP_MAX of them a turn: the rest in the turn after.
        monkeypatch.setattr(sqlite_writer, "LOOP_GROUP_MAX", 2)
        before = commits()
        assert await asyncio.gather(*(put(k) for k in range(13, 18))) == [loop_thread] * 5
        assert commits() == before + 3  # one inline, then 2 + 2 in two turns
        monkeypatch.setattr(sqlite_writer, "INLINE_TURN_S", 1.0)
        assert [k for k, _ in rows()] == list(range(1, 18))
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()
        await store.close()
