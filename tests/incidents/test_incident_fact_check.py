"""The fact check treats an open incident's notice in scope as a backed source: a time taken from the
notice is delivered, a time that contradicts it is withheld (the notice's own sentence in its place)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.app import App, build_app
from bot.config import load_settings
from bot.conversations import Incoming
from bot.conversations.recording import RecordingSurface
from bot.guards.output import FactContext, OutputGuard
from bot.incidents import parse_scope
from bot.llm.scripted import ScriptedLLM
from bot.store import Store, utcnow
from tests.fakes.knowledge import EmptyPolicyIndex
from tools.base import Actor

NOTICE_KO = "서버 점검이 연장되어 서버는 15시에 열립니다."
NOTICE_EN = "Maintenance was extended; the servers open at 15:00."
LUNA = Actor(discord_id="9001", player_id="P100")


def _guard(store: Store, notices: tuple[str, ...]) -> OutputGuard:
    facts = FactContext(player_texts=("서버 언제 열려요?",), notices=notices, run_id="run-n")
    return OutputGuard(store=store, actor=LUNA, thread_id="discord:1", facts=facts)


async def test_a_time_from_the_notice_is_delivered_and_a_contradicting_one_is_replaced(store: Store) -> None:
    backed = await _guard(store, (NOTICE_KO, NOTICE_EN)).check("서버는 15시에 열립니다.", outcomes=[])
    assert backed.text == "서버는 15시에 열립니다."
    wrong = await _guard(store, (NOTICE_KO, NOTICE_EN)).check("서버는 17시에 열립니다.", outcomes=[])
    assert "17시" not in wrong.text and NOTICE_KO in wrong.text and wrong.facts_withheld == 1
    without = await _guard(store, ()).check("서버는 15시에 열립니다.", outcomes=[])
    assert "15시" not in without.text, "without an open notice nothing backs the time"


@pytest.fixture
async def app(seeded_store: Store, tmp_path: Any) -> App:
    settings = load_settings(data_dir=tmp_path / "var", edit_interval=0.0)
    return await build_app(
        settings,
        llm_factory=lambda: ScriptedLLM(
            [
                {"tool": "incident_status", "args": {}},
                {"final": "서버는 15시에 열립니다. 17시에는 보상이 지급됩니다."},
            ]
        ),
        store=seeded_store,
        policy_index=EmptyPolicyIndex(),
    )


async def test_a_conversation_in_scope_states_the_notices_time_and_not_an_invented_one(app: App) -> None:
    await app.store.incidents.open(
        title="점검 연장",
        notice_ko=NOTICE_KO,
        notice_en=NOTICE_EN,
        scope=parse_scope("all"),
        actor="staff:42",
        now=utcnow(),
    )
    actor = await app.conversations.resolve_actor("9001", set())
    surface = RecordingSurface()
    await app.conversations.handle(Incoming("discord:9001", actor, "서버 언제 열려요?"), surface)
    said = surface.all_text
    assert "서버는 15시에 열립니다." in said
    assert "17시" not in said
