"""escalate_to_staff: one open escalation per conversation (also across calls and races), staff notified, a broken notifier loses nothing."""

from __future__ import annotations

import asyncio

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


async def test_a_second_call_while_one_is_open_answers_with_the_open_one(registry, ctx_for, store):
    posted = []

    async def notify(kind, payload):
        posted.append(payload["escalation_id"])

    first = await registry.execute(
        "escalate_to_staff", {"summary": "환불 요청"}, ctx_for(call_id="a", notify=notify)
    )
    second = await registry.execute(
        "escalate_to_staff", {"summary": "다시 요청"}, ctx_for(call_id="b", notify=notify)
    )
    english = await registry.execute(
        "escalate_to_staff", {"summary": "again"}, ctx_for(call_id="c", locale="en", notify=notify)
    )
    assert [r.data["escalation_id"] for r in (first, second, english)] == [1, 1, 1]
    assert "이미 운영진에게 연결 요청이 접수되어 있어요 (#1)" in second.message and second.data["replayed"]
    assert "already open (#1)" in english.message
    assert len(await escalations(store)) == 1 and posted == [1], "one ticket, one staff notice"


async def test_a_closed_escalation_lets_the_next_call_open_a_new_one(registry, ctx_for, store):
    await registry.execute("escalate_to_staff", {"summary": "환불 요청"}, ctx_for(call_id="a"))
    await store.audit(actor="desk", action="escalation.closed", thread_id="test:1", target="escalation:1")
    again = await registry.execute("escalate_to_staff", {"summary": "또 문제"}, ctx_for(call_id="b"))
    assert again.data == again.data | {"escalation_id": 2, "replayed": False}
    assert "운영진에게 전달했습니다(접수 번호 #2)" in again.message


async def test_calls_racing_on_one_conversation_open_one_escalation(registry, ctx_for, store):
    results = await asyncio.gather(
        *(
            registry.execute("escalate_to_staff", {"summary": f"요청 {i}"}, ctx_for(call_id=f"r{i}"))
            for i in range(6)
        )
    )
    assert {r.data["escalation_id"] for r in results} == {1}
    assert sum(not r.data["replayed"] for r in results) == 1
    assert len(await escalations(store)) == 1
