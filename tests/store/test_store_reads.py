"""The store's named reads and writes that staff surfaces, analytics and the desk call, on SQLite and
PostgreSQL: what each returns for rows on either side of its bounds, and the writes that must happen once
(a sign-in link, an escalation key) or not at all (a session that no longer stands)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.store import Store, audit_views, staff_sessions
from bot.store.escalations import NewEscalation, open_escalation
from bot.store.feedback_votes import store_vote, vote_tally
from bot.store.models import Run, RunToolCall
from bot.store.staff_sessions import NewSession
from bot.store.support_facts import window_counts
from bot.store.urls import password_of, sqlite_file_of
from tests.support.scale import seed_ledger

T0 = datetime(2026, 11, 20, 3, 0, tzinfo=UTC)


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    st = Store(db_url)
    await st.open()
    await seed_ledger(st)
    try:
        yield st
    finally:
        await st.close()


async def _audit(store: Store, action: str, at: datetime, **kw: str) -> None:
    async with store.session() as s, s.begin():
        await audit_views.audit_in_session(
            s,
            {
                "at": at,
                "actor": kw.get("actor", "test"),
                "thread_id": kw.get("thread"),
                "action": action,
                "target": kw.get("target"),
                "code": kw.get("code"),
                "detail": kw.get("detail"),
            },
        )


async def test_audit_reads_keep_to_their_action_thread_and_window(store: Store) -> None:
    await _audit(store, "sla.reminder", T0 - timedelta(hours=30), target="escalation:1", code="resolution")
    await _audit(store, "sla.reminder", T0, target="escalation:2", code="first_response", thread="t1")
    await _audit(store, "sla.reminder", T0 + timedelta(minutes=1), target="escalation:3", code="resolution")
    await _audit(store, "escalation.closed", T0, target="escalation:2", thread="t1")

    rows, total = await audit_views.recent_of_action(
        store, "sla.reminder", since=T0 - timedelta(hours=1), limit=1
    )
    assert ([r.target for r in rows], total) == (["escalation:3"], 2)
    assert await audit_views.targets_and_codes(store, "sla.reminder", since=T0) == {
        ("escalation:2", "first_response"),
        ("escalation:3", "resolution"),
    }
    assert await audit_views.targets_of(store, "escalation.closed") == {"escalation:2"}
    assert await audit_views.count_in_thread(store, "t1", "escalation.closed", since=T0, until=T0) == 1
    assert (
        await audit_views.count_in_thread(
            store, "t1", "escalation.closed", since=T0, until=T0 - timedelta(seconds=1)
        )
        == 0
    )
    assert await audit_views.action_counts(store, ("sla.reminder", "escalation.closed", "none")) == {
        "sla.reminder": 3,
        "escalation.closed": 1,
    }
    first = (await audit_views.audit_page(store, audit_views.AuditQuery(action="sla"), limit=1))[0]
    older = await audit_views.audit_page(
        store, audit_views.AuditQuery(action="sla"), limit=10, before_id=first.id
    )
    assert [r.target for r in older] == ["escalation:2", "escalation:1"]


async def test_votes_are_tallied_and_counted_by_their_last_change(store: Store) -> None:
    async with store.session() as s, s.begin():
        for n in range(3):
            s.add(Run(run_id=f"r{n}", thread_id="t", player=f"player:P{n}", started_at=T0, answered_at=T0))
        s.add(RunToolCall(run_id="r0", at=T0, tool="lookup_order", code="ORDER_NOT_FOUND", ok=False))
    for n, vote in ((0, 1), (1, -1), (2, 1)):
        await store_vote(
            store,
            run_id=f"r{n}",
            player=f"player:P{n}",
            vote=vote,
            comment=None,
            thread_id="t",
            now=T0 + timedelta(minutes=n),
            gap_tool="search_policy",
        )
    changed = await store_vote(
        store,
        run_id="r2",
        player="player:P2",
        vote=-1,
        comment=None,
        thread_id="t",
        now=T0 + timedelta(hours=2),
        gap_tool="search_policy",
    )
    assert changed.changed

    assert await vote_tally(store, since=T0, until=T0 + timedelta(hours=1)) == (1, 1)
    counts = await window_counts(
        store,
        since=T0,
        until=T0 + timedelta(hours=3),
        issued_statuses=("active",),
        issue_success_codes=("ISSUED",),
        top_sections=5,
    )
    assert (counts.votes, counts.positive_votes) == (3, 1)
    assert counts.tool_errors == [("ORDER_NOT_FOUND", 1)]


async def test_an_escalation_key_makes_one_row_and_one_audit(store: Store) -> None:
    new = NewEscalation("t9", "P100", None, "쿠폰 미지급", "key-1", T0, "player:P100")
    first, made = await open_escalation(store, new, audit_code="OK")
    again, made_again = await open_escalation(store, new, audit_code="OK")
    assert (made, made_again, again.id) == (True, False, first.id)
    assert await audit_views.action_counts(store, ("escalate",)) == {"escalate": 1}


async def test_a_sign_in_link_opens_one_session_and_a_stale_one_is_not_touched(store: Store) -> None:
    await staff_sessions.add_link(
        store, "L" * 64, staff_id="9001", staff_name="운영자", now=T0, expires_at=T0 + timedelta(minutes=15)
    )
    fresh = NewSession("C" * 64, "csrf", None)
    opened = await staff_sessions.redeem_link(store, "L" * 64, fresh, now=T0 + timedelta(minutes=1))
    assert opened is not None and opened.staff_name == "운영자"
    assert await staff_sessions.redeem_link(store, "L" * 64, NewSession("D" * 64, "x", None), now=T0) is None

    later = T0 + timedelta(hours=1)
    assert await staff_sessions.touch_session(store, "C" * 64, now=later, usable=lambda r: False) is None
    row = await staff_sessions.session_by_cookie(store, "C" * 64)
    assert row is not None and row.last_seen_at == T0 + timedelta(minutes=1)
    assert await staff_sessions.revoke_session(store, row.id, by_staff="9001", now=later)
    assert not await staff_sessions.revoke_session(store, row.id, by_staff="9001", now=later)
    assert await staff_sessions.unrevoked_sessions(store) == []


def test_database_urls_are_read_as_the_engine_reads_them() -> None:
    assert sqlite_file_of("sqlite+aiosqlite:////data/arca.db") == "/data/arca.db"
    assert sqlite_file_of("sqlite+aiosqlite:///:memory:") is None
    assert sqlite_file_of("sqlite+aiosqlite:///file:x?mode=ro&uri=true") is None
    assert sqlite_file_of("postgresql+asyncpg://u:p@h/db") is None
    assert sqlite_file_of("not a url") is None
    assert password_of("postgresql+asyncpg://arca:s3cret@h:5432/db") == "s3cret"
    assert password_of("http://127.0.0.1:8000") is None
