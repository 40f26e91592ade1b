"""The incident compensation card in the loopback Discord with the real discord.py client:
`/incident compensate` posts a preview card (players, orders, total, exclusions, overridden rules) with
Approve / Cancel; only staff can press; approval runs the bulk grant and the card is edited with its
progress and final figures; two racing presses, or a press after a restart, never issue twice."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import func, select

from bench.incident_seed import seed_orders
from bot.incidents import parse_scope
from bot.llm.scripted import ScriptedLLM
from bot.store import AuditEntry, Coupon
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, FakeUser

STAFF = FakeDiscord.STAFF_CHANNEL


async def _incident(running: Any, orders: int) -> tuple[int, int]:
    store = running.conversations.store
    await seed_orders(store, orders)
    incident = await store.incidents.open(
        title="택배 지연",
        notice_ko="택배사 파업으로 배송이 3일 늦어집니다.",
        notice_en="Deliveries are 3 days late.",
        scope=parse_scope("status=delayed"),
        actor="staff:42",
        now=running.conversations.clock(),
    )
    return incident.id, await store.incidents.count_orders(incident)


async def _card(fake: FakeDiscord, running: Any, incident_id: int, plan: str) -> dict[str, Any]:
    token = await fake.slash(42, STAFF, "incident", {"id": incident_id, "plan": plan}, sub="compensate")
    await fake.wait_for(lambda: fake.interaction_texts(token), what="the preview reply")
    cards = lambda: [m for m in fake.bot_messages(STAFF) if m.get("embeds")]  # noqa: E731
    await fake.wait_for(cards, what="the preview card")
    [card] = cards()
    return card


def _fields(message: dict[str, Any]) -> dict[str, str]:
    return {f["name"]: f["value"] for f in message["embeds"][0].get("fields", [])}


async def _coupons(running: Any, incident_id: int) -> int:
    async with running.conversations.store.session() as s:
        query = select(func.count(Coupon.id)).where(Coupon.idempotency_key.like(f"incident:{incident_id}:%"))
        return int((await s.execute(query)).scalar_one())


def _answered(fake: FakeDiscord, token: str) -> bool:
    rec = fake.interactions[token]
    return rec["callback"] is not None and (rec["callback"].get("type") != 6 or bool(rec["followups"]))


async def test_the_preview_card_shows_the_figures_and_approve_or_cancel(harness, fake):
    running = await harness.start(ScriptedLLM([]))
    incident_id, orders = await _incident(running, 40)
    card = await _card(fake, running, incident_id, "5000 per=order budget=100000")
    embed = card["embeds"][0]
    assert f"#{incident_id}" in embed["title"] and "5,000원" in embed["description"]
    fields = _fields(card)
    assert fields["주문 / Orders"] == "20" and fields["합계 / Total"] == "100,000원"
    assert f"{orders - 20:,} · " in fields["제외 / Excluded"] and "예산 소진" in fields["제외 / Excluded"]
    assert "`daily_max_count`" in fields["적용하지 않는 규칙 / Rules overridden"]
    assert fake.buttons(int(card["id"])) == [f"arca:inc:ok:{incident_id}", f"arca:inc:no:{incident_id}"]

    refused = await fake.press(9001, int(card["id"]), f"arca:inc:ok:{incident_id}")
    await fake.wait_for(lambda: fake.interactions[refused]["callback"] is not None, what="the refusal")
    [(text, flags)] = fake.interaction_texts(refused)
    assert text.startswith("⛔") and flags & EPHEMERAL
    assert await _coupons(running, incident_id) == 0

    cancel = await fake.press(42, int(card["id"]), f"arca:inc:no:{incident_id}")
    await fake.wait_for(lambda: _answered(fake, cancel), what="the cancel press")
    edited = fake.messages[int(card["id"])]
    assert edited["components"] == [] and "취소됨" in _fields(edited)["진행 / Progress"]
    assert (await running.conversations.store.incidents.get(incident_id)).comp_state == "cancelled"
    assert await _coupons(running, incident_id) == 0


async def test_two_racing_approvals_issue_each_coupon_once_and_the_card_shows_progress(harness, fake, db_url):
    # On SQLite and (under the `postgres` marker) on PostgreSQL, where the incident row's lock decides.
    fake.add_user(FakeUser(43, "staffer2", roles=[FakeDiscord.STAFF_ROLE]))
    running = await harness.start(ScriptedLLM([]), settings=harness.settings(db_url=db_url))
    incident_id, orders = await _incident(running, 1_500)
    card = await _card(fake, running, incident_id, "3000 per=order")
    mid, button = int(card["id"]), f"arca:inc:ok:{incident_id}"
    t1, t2 = await asyncio.gather(fake.press(42, mid, button), fake.press(43, mid, button))
    for token in (t1, t2):
        await fake.wait_for(lambda token=token: _answered(fake, token), what="the approval", within=60)

    assert await _coupons(running, incident_id) == orders
    final = fake.messages[mid]
    progress = _fields(final)["진행 / Progress"]
    assert f"발급 / issued {orders:,} / {orders:,}" in progress and "100%" in progress
    assert final["components"] == [] and "완료 / done" in final["embeds"][0]["footer"]["text"]
    assert len(final.get("edits", [])) >= 2, "approved, then the final figures (progress in between)"
    async with running.conversations.store.session() as s:
        batches = await s.execute(
            select(AuditEntry.detail).where(AuditEntry.action == "incident.grant_batch")
        )
        issued = sum(int(d.split('"issued": ')[1].split(",")[0]) for d in batches.scalars())
    assert issued == orders, "the second approval issued nothing again"


async def test_a_run_killed_mid_way_is_resumed_from_the_card_after_a_restart(harness, fake):
    first = await harness.start(ScriptedLLM([]))
    incident_id, orders = await _incident(first, 40)
    card = await _card(fake, first, incident_id, "2000 per=order")
    store = first.conversations.store
    # As if the process died right after the approval: the plan is approved, the card shows Resume.
    await store.incidents.set_plan(incident_id, None, state="approved", actor="staff:42")
    from bot.staffroom.discord_staff.incidents import resume_view

    await (
        (await first.bot.fetch_channel(STAFF))
        .get_partial_message(int(card["id"]))
        .edit(view=resume_view(incident_id))
    )
    assert fake.buttons(int(card["id"])) == [f"arca:inc:ok:{incident_id}"]
    await first.stop()
    second = await harness.start(ScriptedLLM([]))
    token = await fake.press(42, int(card["id"]), f"arca:inc:ok:{incident_id}")
    await fake.wait_for(lambda: _answered(fake, token), what="the resume press")
    assert await _coupons(second, incident_id) == orders
    assert fake.messages[int(card["id"])]["components"] == []


async def test_the_approve_button_works_after_a_restart(harness, fake):
    first = await harness.start(ScriptedLLM([]))
    incident_id, orders = await _incident(first, 30)
    card = await _card(fake, first, incident_id, "2000 per=order")
    await first.stop()
    second = await harness.start(ScriptedLLM([]))  # the button lives only in its custom_id
    token = await fake.press(42, int(card["id"]), f"arca:inc:ok:{incident_id}")
    await fake.wait_for(lambda: _answered(fake, token), what="the approval after the restart")
    assert await _coupons(second, incident_id) == orders
