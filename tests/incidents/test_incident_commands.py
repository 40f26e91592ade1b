"""`/incident …` through the one staff registry (console and transcripts dispatch these lines; Discord
the same commands with typed options): declare, list, update, preview and approve compensation,
close with the report; non-staff are refused and audited."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from bot.app import App, build_app
from bot.config import load_settings
from bot.conversations import Incoming, TurnOutcome
from bot.llm.scripted import ScriptedLLM
from bot.store import AuditEntry, Coupon, Store
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.support.surface import RecordingSurface

STAFF_ROLE = "Support Staff"
OPEN = '/incident open "택배 지연" status=delayed 택배사 파업으로 배송이 3일 늦어집니다. || Deliveries are 3 days late.'


@pytest.fixture
async def app(seeded_store: Store, tmp_path: Any) -> App:
    settings = load_settings(data_dir=tmp_path / "var", edit_interval=0.0)
    return await build_app(
        settings, llm_factory=lambda: ScriptedLLM([]), store=seeded_store, policy_index=EmptyPolicyIndex()
    )


async def _say(app: App, text: str, *, staff: bool = True) -> TurnOutcome:
    actor = await app.conversations.resolve_actor("42", {STAFF_ROLE} if staff else set())
    return await app.conversations.handle(Incoming("console:staff", actor, text), RecordingSurface())


async def _delayed_orders(store: Store) -> set[str]:
    from bot.store import Order

    async with store.session() as s:
        return set((await s.execute(select(Order.id).where(Order.status == "delayed"))).scalars())


async def test_staff_declare_update_list_and_show_an_incident(app: App) -> None:
    opened = await _say(app, OPEN)
    assert opened.reply.ok and "택배 지연" in opened.reply.text
    incident_id = opened.reply.data["id"]
    await _say(app, f"/incident update {incident_id} 배송이 5일 늦어집니다. || Deliveries are 5 days late.")
    shown = await _say(app, f"/incident show {incident_id}")
    assert "5일" in shown.reply.text and "(v2)" in shown.reply.text and '"delayed"' in shown.reply.text
    listed = await _say(app, "/incident list")
    assert f"#{incident_id} [open]" in listed.reply.text


async def test_compensation_is_previewed_then_approved_once_and_the_close_reports_it(app: App) -> None:
    incident_id = (await _say(app, OPEN)).reply.data["id"]
    delayed = await _delayed_orders(app.store)
    preview = await _say(app, f"/incident compensate {incident_id} 5,000 per=order budget=1000000")
    assert preview.reply.ok and f"주문 {len(delayed)}건" in preview.reply.text
    assert "daily_max_count" in preview.reply.text
    async with app.store.session() as s:
        assert not list((await s.execute(select(Coupon))).scalars())  # a preview writes no coupon

    done = await _say(app, f"/incident compensate {incident_id} approve")
    again = await _say(app, f"/incident compensate {incident_id} approve")
    assert done.reply.data["issued"] == len(delayed) and again.reply.data["issued"] == 0
    async with app.store.session() as s:
        coupons = list((await s.execute(select(Coupon))).scalars())
        overrides = list(
            (await s.execute(select(AuditEntry).where(AuditEntry.action == "incident.override"))).scalars()
        )
    assert {c.order_id for c in coupons} == delayed and len(coupons) == len(delayed)
    assert overrides and "daily_max_amount" in overrides[0].detail

    closed = await _say(app, f"/incident close {incident_id}")
    assert "Incident closed" in closed.reply.text
    assert f"주문 {len(delayed)}건" in closed.reply.text and f"{len(delayed) * 5000:,}원" in closed.reply.text
    assert closed.reply.data["compensation"]["krw_spent"] == len(delayed) * 5000


async def test_a_player_cannot_declare_an_incident_and_the_attempt_is_audited(app: App) -> None:
    outcome = await _say(app, OPEN, staff=False)
    assert outcome.reply.denied
    assert await app.store.incidents.list() == []
    async with app.store.session() as s:
        rows = list((await s.execute(select(AuditEntry).where(AuditEntry.code == "DENIED"))).scalars())
    assert any("incident" in (r.action or "") + (r.target or "") for r in rows)
