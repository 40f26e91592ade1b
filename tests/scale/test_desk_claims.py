"""SLA reminders and auto-closes run in every serving process (Discord, web, both) and each is done
exactly once across them: two processes' stores on one database check at the same instant (controlled
clock) and one reminder per target and one closing notice per escalation come out, on SQLite and
PostgreSQL alike."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import select

from bot.desk.auto_close import close_idle
from bot.desk.sla import send_reminders
from bot.store import AuditEntry, Escalation, Store
from tests.support.context import NOW
from tests.support.desk import TARGETS

PROCESSES = 4


async def stores(db_url: str, first: Store) -> list[Store]:
    more = [Store(db_url) for _ in range(PROCESSES - 1)]
    for st in more:
        await st.open(create=False)
    return [first, *more]


async def escalation(store: Store, thread: str) -> int:
    async with store.session() as s, s.begin():
        row = Escalation(thread_id=thread, player_id="P100", summary="환불", status="open", created_at=NOW)
        s.add(row)
        await s.flush()
        return row.id


async def audit_count(store: Store, action: str) -> int:
    async with store.session() as s:
        return len((await s.execute(select(AuditEntry).where(AuditEntry.action == action))).scalars().all())


async def test_each_reminder_goes_out_once_across_processes(store: Store, db_url: str) -> None:
    await escalation(store, "discord:1")
    await escalation(store, "web:v1:main")
    posted: list[tuple[int, str]] = []

    async def notify(kind: str, payload: dict) -> None:
        posted.append((payload["escalation_id"], payload["target"]))

    all_stores = await stores(db_url, store)
    try:
        at = NOW + timedelta(minutes=55)  # 5 min before the first-response target
        await asyncio.gather(
            *(send_reminders(st, notify, TARGETS, at, by=f"p{i}") for i, st in enumerate(all_stores))
        )
        await asyncio.gather(
            *(send_reminders(st, notify, TARGETS, at, by=f"p{i}") for i, st in enumerate(all_stores))
        )
    finally:
        for st in all_stores[1:]:
            await st.close()

    assert sorted(posted) == [(1, "first_response"), (2, "first_response")]
    assert await audit_count(store, "sla.reminder") == 2


async def test_a_process_that_waits_leaves_the_reminder_to_the_discord_process(store: Store) -> None:
    await escalation(store, "discord:1")
    posted: list[str] = []

    async def web_notify(kind: str, payload: dict) -> None:
        posted.append("web")

    async def discord_notify(kind: str, payload: dict) -> None:
        posted.append("discord")

    at = NOW + timedelta(minutes=51)  # due for a reminder one minute ago
    assert await send_reminders(store, web_notify, TARGETS, at, wait=timedelta(minutes=2)) == []
    assert len(await send_reminders(store, discord_notify, TARGETS, at)) == 1
    assert (
        await send_reminders(store, web_notify, TARGETS, at + timedelta(minutes=5), wait=timedelta(minutes=2))
        == []
    )
    assert posted == ["discord"]


async def test_each_idle_escalation_is_closed_once_across_processes(store: Store, db_url: str) -> None:
    await escalation(store, "discord:1")
    await escalation(store, "web:v1:main")
    told: list[tuple[str, str]] = []

    async def tell(thread_id: str, text: str) -> None:
        told.append((thread_id, text))

    all_stores = await stores(db_url, store)
    try:
        at = NOW + timedelta(hours=49)
        done = await asyncio.gather(
            *(close_idle(st, tell, at, timedelta(hours=48), by=f"p{i}") for i, st in enumerate(all_stores))
        )
    finally:
        for st in all_stores[1:]:
            await st.close()

    assert sorted(t for t, _ in told) == ["discord:1", "web:v1:main"]
    assert sorted(i for ids in done for i in ids) == [1, 2]
    assert await audit_count(store, "escalation.closed") == 2


async def test_a_process_closes_only_the_conversations_it_can_post_into(store: Store) -> None:
    await escalation(store, "discord:1")
    await escalation(store, "web:v1:main")
    told: list[str] = []

    async def tell(thread_id: str, text: str) -> None:
        told.append(thread_id)

    at = NOW + timedelta(hours=49)
    web_only = await close_idle(store, tell, at, timedelta(hours=48), owns=lambda t: t.startswith("web:"))
    assert told == ["web:v1:main"] and len(web_only) == 1
    await close_idle(store, tell, at, timedelta(hours=48))
    assert told == ["web:v1:main", "discord:1"]
