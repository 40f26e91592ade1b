"""Each conversation that asked about an incident (a run that called `incident_status` during it, or whose
answer relayed the pinned notice) is told
what the compensation gave it — amount, coupon code, expiry, in its language — through the staff outbox,
exactly once: a second approval, a second run of the telling at the same time, or a restart add nothing."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from sqlalchemy import select

from bot.app import App, build_app
from bot.config import load_settings
from bot.conversations import Incoming, TurnOutcome
from bot.conversations.recording import RecordingSurface
from bot.incidents.tell import tell_compensated
from bot.llm.scripted import ScriptedLLM
from bot.store import Coupon, Store
from bot.store.models import StaffOutbox
from bot.store.seed import DEFAULT_SEED, apply_seed, load_seed_file
from tests.fakes.knowledge import EmptyPolicyIndex

STAFF_ROLE = "Support Staff"


@pytest.fixture
async def app(seeded_store: Store, tmp_path: Any) -> App:
    settings = load_settings(data_dir=tmp_path / "var", edit_interval=0.0)
    return await build_app(
        settings,
        llm_factory=lambda: ScriptedLLM(
            [{"tool": "incident_status", "args": {}}, {"final": "확인했습니다."}]
        ),
        store=seeded_store,
        policy_index=EmptyPolicyIndex(),
    )


async def _say(app: App, who: str, text: str, thread: str, roles: set[str] | None = None) -> TurnOutcome:
    actor = await app.conversations.resolve_actor(who, roles or set())
    return await app.conversations.handle(Incoming(thread, actor, text), RecordingSurface())


async def _outbox(store: Store) -> dict[str, list[str]]:
    async with store.session() as s:
        rows = (await s.execute(select(StaffOutbox.thread_id, StaffOutbox.text))).all()
    out: dict[str, list[str]] = {}
    for thread, text in rows:
        out.setdefault(thread, []).append(text)
    return out


async def test_askers_are_told_their_coupons_once_in_their_language(app: App) -> None:
    staff = {"roles": {STAFF_ROLE}}
    opened = await _say(
        app,
        "42",
        '/incident open "택배 지연" players=P100,P200 배송이 3일 늦어집니다. || Deliveries are 3 days late.',
        "console:staff",
        **staff,
    )
    incident_id = opened.reply.data["id"]
    await _say(app, "9001", "제 택배 언제 와요? 보상 있나요?", "discord:9001")
    await _say(app, "9002", "Is my delivery late? Any compensation?", "discord:9002")
    await _say(app, "42", f"/incident compensate {incident_id} 3000 per=order", "console:staff", **staff)
    done = await _say(app, "42", f"/incident compensate {incident_id} approve", "console:staff", **staff)
    assert done.reply.data["issued"] >= 2

    told = await _outbox(app.store)
    assert sorted(told) == ["discord:9001", "discord:9002"]
    async with app.store.session() as s:
        coupons = (await s.execute(select(Coupon).where(Coupon.player_id == "P100"))).scalars().all()
    [ko] = told["discord:9001"]
    assert "쿠폰이 발급되었습니다" in ko and "3,000원 쿠폰" in ko and "까지 사용 가능" in ko
    assert re.search(r"20\d\d년 \d{1,2}월 \d{1,2}일\([월화수목금토일]\)까지 사용 가능", ko), ko
    assert all(c.code in ko for c in coupons if (c.reason or "").startswith("incident:"))
    [en] = told["discord:9002"]
    assert "3,000 KRW coupon" in en and "valid until" in en and "원" not in en
    assert re.search(r"valid until (Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} \d{1,2}, 20\d\d", en), en

    await _say(app, "42", f"/incident compensate {incident_id} approve", "console:staff", **staff)
    again = await asyncio.gather(*(tell_compensated(app.store, incident_id) for _ in range(3)))
    assert again == [0, 0, 0]
    assert {k: len(v) for k, v in (await _outbox(app.store)).items()} == {
        "discord:9001": 1,
        "discord:9002": 1,
    }


@pytest.fixture
async def any_store(db_url: str) -> Any:
    """The demo data on SQLite and on PostgreSQL."""
    st = Store(db_url)
    await st.open()
    await apply_seed(st, load_seed_file(DEFAULT_SEED))
    try:
        yield st
    finally:
        await st.close()


async def test_a_conversation_answered_from_the_pinned_notice_is_told_once_and_one_that_never_mentioned_it_is_not(
    any_store: Store, tmp_path: Any
) -> None:
    script: dict[str, list[dict[str, Any]]] = {"steps": []}
    settings = load_settings(data_dir=tmp_path / "var", edit_interval=0.0)
    app = await build_app(
        settings,
        llm_factory=lambda: ScriptedLLM(script["steps"]),
        store=any_store,
        policy_index=EmptyPolicyIndex(),
    )
    staff = {"roles": {STAFF_ROLE}}
    opened = await _say(
        app,
        "42",
        '/incident open "택배 지연" players=P100,P200 택배사 사정으로 배송이 3일 늦어집니다. || '
        "Deliveries are 3 days late.",
        "console:staff",
        **staff,
    )
    incident_id = opened.reply.data["id"]
    # No incident_status call: the model answers from the notice pinned in its system prompt.
    script["steps"] = [{"final": "공지에 따르면 택배사 사정으로 배송이 3일 늦어집니다. 양해 부탁드립니다."}]
    relayed = await _say(app, "9001", "제 택배 언제 와요?", "discord:9001")
    assert "3일 늦어집니다" in (relayed.answer or "")
    # P200 is in scope too, but talks about something else.
    script["steps"] = [{"final": "비밀번호는 게임 설정 메뉴에서 바꿀 수 있습니다."}]
    await _say(app, "9002", "비밀번호 어떻게 바꿔요?", "discord:9002")

    await _say(app, "42", f"/incident compensate {incident_id} 3000 per=order", "console:staff", **staff)
    done = await _say(app, "42", f"/incident compensate {incident_id} approve", "console:staff", **staff)
    assert done.reply.data["issued"] >= 2  # both players were compensated
    told = await _outbox(any_store)
    assert list(told) == ["discord:9001"]
    [ko] = told["discord:9001"]
    assert "3,000원 쿠폰" in ko and "쿠폰 코드 ARCA-" in ko

    await _say(app, "42", f"/incident compensate {incident_id} approve", "console:staff", **staff)
    assert await tell_compensated(any_store, incident_id) == 0
    assert {k: len(v) for k, v in (await _outbox(any_store)).items()} == {"discord:9001": 1}
