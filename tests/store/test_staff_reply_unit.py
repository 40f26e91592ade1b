"""A staff reply is kept in the thread's history and queued in the staff outbox as one store unit
(`bot.store.outbox.keep_and_queue_reply`, issues 51/52), on SQLite and on PostgreSQL: when the outbox
refuses the row, the history row is not there either, and the memory's next load does not show it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import func, select, text

from bot.desk.staff_reply import send_staff_reply
from bot.memory import ThreadMemory
from bot.store import Store, ThreadMessage
from bot.store.models import StaffOutbox
from bot.store.outbox import keep_and_queue_reply, pending_replies
from bot.store.threads import message_row

THREAD = "discord:4242"

# A database trigger that refuses every outbox row: the failure comes from the database, inside the
# unit's transaction, after the history row was inserted.
REFUSE = {
    "sqlite": [
        "CREATE TRIGGER outbox_refuses BEFORE INSERT ON staff_outbox "
        "BEGIN SELECT RAISE(ABORT, 'outbox refused'); END"
    ],
    "postgresql": [
        "CREATE FUNCTION outbox_refuses() RETURNS trigger AS $$ "
        "BEGIN RAISE EXCEPTION 'outbox refused'; END $$ LANGUAGE plpgsql",
        "CREATE TRIGGER outbox_refuses BEFORE INSERT ON staff_outbox "
        "FOR EACH ROW EXECUTE FUNCTION outbox_refuses()",
    ],
}


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[Store]:
    store = Store(db_url)
    await store.open()
    yield store
    await store.close()


async def _counts(store: Store) -> tuple[int, int]:
    async with store.session() as s:
        messages = await s.scalar(select(func.count()).select_from(ThreadMessage))
        queued = await s.scalar(select(func.count()).select_from(StaffOutbox))
    return int(messages or 0), int(queued or 0)


async def test_a_reply_is_kept_and_queued_together(db: Store) -> None:
    memory = ThreadMemory(db)
    await send_staff_reply(memory, db, THREAD, "확인했습니다.", author="42", signed="미나")

    [kept] = await memory.load(THREAD)
    assert (kept["content"], kept["name"]) == ("확인했습니다.", "staff:42")
    [queued] = await pending_replies(db, "discord:")
    assert (queued.thread_id, queued.staff, queued.text) == (THREAD, "미나", "확인했습니다.")


async def test_the_unit_returns_both_ids(db: Store) -> None:
    message = {"role": "assistant", "content": "네."}
    row = message_row(THREAD, message, run_id=None, pinned=False, kind="answer")
    message_id, reply_id = await keep_and_queue_reply(db, row, "미나")

    assert [m["_id"] for m in await ThreadMemory(db).load(THREAD)] == [message_id]
    assert [r.id for r in await pending_replies(db, "discord:")] == [reply_id]


async def test_a_refused_outbox_row_leaves_no_history_row(db: Store, backend: str) -> None:
    memory = ThreadMemory(db)
    await memory.append(THREAD, {"role": "user", "content": "환불 언제 되나요?"}, kind="query")
    async with db.session() as s, s.begin():
        for statement in REFUSE[backend]:
            await s.execute(text(statement))

    with pytest.raises(Exception) as refused:
        await send_staff_reply(memory, db, THREAD, "곧 처리됩니다.", author="42", signed="미나")

    # SQLite reports the trigger's ABORT as a constraint (`RaceLost` from the database's error).
    assert "outbox refused" in f"{refused.value} {refused.value.__cause__}"
    assert await _counts(db) == (1, 0)
    assert [m["content"] for m in await memory.load(THREAD)] == ["환불 언제 되나요?"]
    # The store is still usable: the next reply, once the outbox takes rows again, is kept and queued.
    on_table = "" if backend == "sqlite" else " ON staff_outbox"
    async with db.session() as s, s.begin():
        await s.execute(text(f"DROP TRIGGER outbox_refuses{on_table}"))
    await send_staff_reply(memory, db, THREAD, "처리했습니다.", author="42", signed="미나")
    assert await _counts(db) == (2, 1)
