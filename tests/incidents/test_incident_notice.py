"""While an incident is open, every conversation in its scope carries the notice in what the model is
sent (and an update is read at the next run); out-of-scope players do not; unlinked users see the
notices meant for all players; `incident_status` gives the model the current state."""

from __future__ import annotations

from typing import Any

import pytest

from bot.app import App, build_app
from bot.config import load_settings
from bot.conversations import Incoming
from bot.incidents import open_notices, parse_scope
from bot.llm.function import FunctionLLM, ModelRequest
from bot.store import Store, utcnow
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.support.context import make_ctx
from tests.support.surface import RecordingSurface
from tools.base import Actor

SEEN: list[ModelRequest] = []


def _model(request: ModelRequest) -> str:
    SEEN.append(request)
    return "확인했습니다."


@pytest.fixture
async def app(seeded_store: Store, tmp_path: Any) -> App:
    SEEN.clear()
    settings = load_settings(data_dir=tmp_path / "var", edit_interval=0.0)
    return await build_app(
        settings, llm_factory=lambda: FunctionLLM(_model), store=seeded_store, policy_index=EmptyPolicyIndex()
    )


def _sent() -> str:
    return "\n".join(str(m.get("content") or "") for r in SEEN for m in r.messages)


async def _ask(app: App, who: str, text: str) -> None:
    actor = await app.conversations.resolve_actor(who, set())
    await app.conversations.handle(Incoming(f"discord:{who}", actor, text), RecordingSurface())


async def test_the_notice_reaches_the_model_in_scope_and_an_update_is_used_at_once(app: App) -> None:
    incident = await app.store.incidents.open(
        title="택배 지연",
        notice_ko="택배사 파업으로 배송이 3일 늦어집니다.",
        notice_en="",
        scope=parse_scope("players=P100"),
        actor="staff:42",
        now=utcnow(),
    )
    await _ask(app, "9001", "제 주문 언제 와요?")
    assert "배송이 3일 늦어집니다" in _sent()
    SEEN.clear()
    await app.store.incidents.update_notice(
        incident.id, notice_ko="배송이 5일 늦어집니다.", notice_en=None, actor="staff:42"
    )
    await _ask(app, "9001", "다시 물어볼게요, 언제 와요?")
    assert "배송이 5일 늦어집니다" in _sent() and "3일" not in _sent()
    SEEN.clear()
    await _ask(app, "9002", "제 주문 언제 와요?")  # P200 is not in scope
    assert "늦어집니다" not in _sent()


async def test_unlinked_users_see_notices_for_all_players_and_the_tool_reports_the_state(app: App) -> None:
    await app.store.incidents.open(
        title="서버 점검 연장",
        notice_ko="점검이 14시까지 연장됩니다.",
        notice_en="Maintenance runs until 14:00.",
        scope=parse_scope("all"),
        actor="staff:42",
        now=utcnow(),
    )
    assert await open_notices(app.store, None, "en") == ["Maintenance runs until 14:00."]
    await _ask(app, "5555", "server when open?")
    assert "Maintenance runs until 14:00." in _sent()
    ctx = make_ctx(Actor("5555"), store=app.store, thread_id="discord:5555", run_id="r")
    result = await app.conversations.tools.execute("incident_status", {}, ctx.for_call("c1"))
    assert result.ok and "점검이 14시까지 연장됩니다." in result.message
