"""escalate_to_staff: recorded once per call, staff notified, a broken notifier loses nothing."""

from __future__ import annotations

from sqlalchemy import select

from bot.store import AuditEntry, Escalation
from tests.support.context import UNLINKED
from tools.base import ResultCode


async def escalations(store):
    async with store.session() as s:
        return list((await s.execute(select(Escalation))).scalars())


async def test_escalation_is_recorded_audited_and_posted_to_staff(registry, ctx_for, store):
    posted = []

    async def notify(kind, payload):
        posted.append((kind, payload))

    res = await registry.execute("escalate_to_staff", {"summary": "ORD001 환불 요청"}, ctx_for(notify=notify))
    assert res.code == ResultCode.OK and "운영진" in res.message
    [row] = await escalations(store)
    assert row.summary == "ORD001 환불 요청" and row.player_id == "P100" and row.thread_id == "test:1"
    assert posted[0][0] == "escalation" and posted[0][1]["escalation_id"] == row.id
    async with store.session() as s:
        audit = (await s.execute(select(AuditEntry).where(AuditEntry.action == "escalate"))).scalars().all()
    assert len(audit) == 1


async def test_unlinked_users_may_escalate(registry, ctx_for, store):
    res = await registry.execute(
        "escalate_to_staff", {"summary": "계정 연동 요청"}, ctx_for(UNLINKED, locale="en")
    )
    assert res.code == ResultCode.OK and "staff" in res.message
    assert (await escalations(store))[0].discord_id == "9009"


async def test_the_same_call_twice_records_one_escalation(registry, ctx_for, store):
    ctx = ctx_for(call_id="esc")
    first = await registry.execute("escalate_to_staff", {"summary": "도와주세요"}, ctx)
    second = await registry.execute("escalate_to_staff", {"summary": "도와주세요"}, ctx)
    assert first.data["escalation_id"] == second.data["escalation_id"] and second.data["replayed"]
    assert len(await escalations(store)) == 1


async def test_notifier_failure_keeps_the_record(registry, ctx_for, store):
    async def broken(kind, payload):
        raise RuntimeError("discord down")

    res = await registry.execute("escalate_to_staff", {"summary": "도와주세요"}, ctx_for(notify=broken))
    assert res.code == ResultCode.OK and res.data["notified"] is False
    assert len(await escalations(store)) == 1


async def test_empty_or_oversized_summary_is_a_clear_error(registry, ctx_for, store):
    empty = await registry.execute("escalate_to_staff", {"summary": "   "}, ctx_for())
    assert empty.code == ResultCode.ERROR and "비어" in empty.message
    huge = await registry.execute("escalate_to_staff", {"summary": "가" * 2001}, ctx_for())
    assert huge.code == ResultCode.ERROR and "2,000" in huge.message
    assert await escalations(store) == []
