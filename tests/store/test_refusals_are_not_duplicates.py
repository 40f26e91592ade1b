"""A store call that treats a unique key's refusal as "already there" (a claim lost, a vote retried, an
escalation or a ticket another process opened) still reports any other refusal by the database (a
foreign key, a trigger) as the database's error, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from bot.store import Store, desk_claims
from bot.store.escalations import NewEscalation, open_escalation
from bot.store.feedback_votes import store_vote
from bot.store.incident_deliveries import IncidentDeliveries
from bot.store.incident_posts import IncidentPosts
from bot.store.models import Run
from bot.store.tickets import claim_ticket

T0 = datetime(2026, 12, 7, 3, 0, tzinfo=UTC)
NO_SUCH_INCIDENT = 424242


def _refusing(backend: str, table: str) -> list[str]:
    """A trigger that refuses every row inserted into `table` as a CHECK would (an integrity error that is
    not a unique key)."""
    if backend == "sqlite":
        return [
            f"CREATE TRIGGER {table}_refuses BEFORE INSERT ON {table} BEGIN SELECT RAISE(ABORT, 'refused'); END"
        ]
    return [
        f"CREATE FUNCTION {table}_refuses() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused' USING ERRCODE = 'check_violation'; END $$ "
        "LANGUAGE plpgsql",
        f"CREATE TRIGGER {table}_refuses BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION {table}_refuses()",
    ]


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    st = Store(db_url)
    await st.open()
    yield st
    await st.close()


async def _refuse(store: Store, backend: str, table: str) -> None:
    async with store.session() as s, s.begin():
        for statement in _refusing(backend, table):
            await s.execute(text(statement))


async def test_an_incident_post_for_no_incident_is_an_error_not_a_claim_held_elsewhere(store: Store) -> None:
    with pytest.raises(IntegrityError):
        await IncidentPosts(store).claim_new(NO_SUCH_INCIDENT, "c1", "1:open")


async def test_telling_a_conversation_about_no_incident_is_an_error_not_already_told(store: Store) -> None:
    with pytest.raises(IntegrityError):
        await IncidentDeliveries(store).tell(NO_SUCH_INCIDENT, "web:P1", "P1", "보상이 지급되었습니다")


async def test_a_refused_desk_claim_is_an_error_and_a_taken_key_is_false(store: Store, backend: str) -> None:
    assert await desk_claims.claim(store, "sla:1", by="proc-a", now=T0) is True
    assert await desk_claims.claim(store, "sla:1", by="proc-b", now=T0) is False
    await _refuse(store, backend, "desk_claims")
    with pytest.raises(IntegrityError, match="refused"):
        await desk_claims.claim(store, "sla:2", by="proc-a", now=T0)


async def test_a_refused_escalation_is_the_databases_error(store: Store, backend: str) -> None:
    await _refuse(store, backend, "escalations")
    new = NewEscalation("t9", "P100", None, "쿠폰 미지급", "key-1", T0, "player:P100")
    with pytest.raises(IntegrityError, match="refused"):
        await open_escalation(store, new, audit_code="OK")


async def test_a_refused_ticket_is_the_databases_error_not_a_failed_claim(store: Store, backend: str) -> None:
    await _refuse(store, backend, "tickets")
    with pytest.raises(IntegrityError, match="refused"):
        await claim_ticket(store, guild_id=1, channel_id=2, player=3, now=T0)


async def test_a_refused_vote_is_the_databases_error_not_try_again(store: Store, backend: str) -> None:
    async with store.session() as s, s.begin():
        s.add(Run(run_id="r1", thread_id="t", player="player:P1", started_at=T0, answered_at=T0))
    await _refuse(store, backend, "feedback")
    with pytest.raises(IntegrityError, match="refused"):
        await store_vote(
            store,
            run_id="r1",
            player="player:P1",
            vote=1,
            comment=None,
            thread_id="t",
            now=T0,
            gap_tool="search_policy",
        )
