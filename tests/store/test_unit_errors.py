"""A store unit reports `RaceLost` only for a unique constraint: any other refusal by the database
(a trigger, a CHECK) reaches the caller as the database's own error, on every path a unit runs on."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text

from bot.store import RaceLost, Store
from bot.store.models import StaffOutbox, utcnow
from bot.store.units import Insert, Unit, is_unique_violation

OUTBOX = StaffOutbox.__table__
COLUMNS = ("thread_id", "staff", "text", "created_at")

REFUSE = {
    "sqlite": [
        "CREATE TRIGGER outbox_refuses BEFORE INSERT ON staff_outbox "
        "WHEN NEW.text = 'refused' BEGIN SELECT RAISE(ABORT, 'outbox refused'); END"
    ],
    "postgresql": [
        "CREATE FUNCTION outbox_refuses() RETURNS trigger AS $$ BEGIN "
        "IF NEW.text = 'refused' THEN RAISE EXCEPTION 'outbox refused'; END IF; RETURN NEW; END $$ "
        "LANGUAGE plpgsql",
        "CREATE TRIGGER outbox_refuses BEFORE INSERT ON staff_outbox "
        "FOR EACH ROW EXECUTE FUNCTION outbox_refuses()",
    ],
}


@pytest.fixture
async def db(db_url: str, backend: str) -> AsyncIterator[Store]:
    store = Store(db_url)
    await store.open()
    async with store.session() as s, s.begin():
        for statement in [*REFUSE[backend], "CREATE UNIQUE INDEX outbox_one_text ON staff_outbox (text)"]:
            await s.execute(text(statement))
    yield store
    await store.close()


def _queue(words: str) -> Unit[list[int]]:
    row = {"thread_id": "web:P1", "staff": "미나", "text": words, "created_at": utcnow()}
    ids = yield Insert(OUTBOX, COLUMNS, [row], ids=True)
    return list(ids)


@pytest.mark.parametrize("plain", [True, False], ids=["direct", "engine"])
async def test_a_unique_constraint_is_a_lost_race(db: Store, plain: bool) -> None:
    await db.run(lambda: _queue("once"), write=True, plain=plain)
    with pytest.raises(RaceLost) as lost:
        await db.run(lambda: _queue("once"), write=True, plain=plain)
    assert is_unique_violation(lost.value.__cause__)


@pytest.mark.parametrize("plain", [True, False], ids=["direct", "engine"])
async def test_another_refusal_is_not_a_lost_race(db: Store, plain: bool) -> None:
    with pytest.raises(Exception) as refused:
        await db.run(lambda: _queue("refused"), write=True, plain=plain)
    assert not isinstance(refused.value, RaceLost)
    assert "outbox refused" in str(refused.value)
    # The store is still usable after the refusal.
    assert len(await db.run(lambda: _queue("accepted"), write=True, plain=plain)) == 1
