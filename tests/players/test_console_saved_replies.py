"""Saved replies in the console (`arca-bot chat`): staff save one, list them with `/reply`, and `/reply
NAME name=value …` prints the filled reply; a missing value prints the line to type."""

from __future__ import annotations

import io
from typing import Any

from bot.app import build_app
from bot.config import load_settings
from bot.llm.scripted import ScriptedLLM
from bot.players.terminal import run_console
from bot.store import Store
from tests.fakes.knowledge import EmptyPolicyIndex

LINES = """/replies save eta {player}님, {order}은(는) {date}에 도착합니다. || Hi {player}, {order} arrives on {date}.
/reply
/reply eta player=루나 order=ORD001
/reply eta player=루나 order=ORD001 date=3월5일
"""


async def test_console_lists_and_sends_a_saved_reply(seeded_store: Store, tmp_path: Any) -> None:
    settings = load_settings(data_dir=tmp_path / "var", edit_interval=0.0)
    app = await build_app(
        settings, llm_factory=lambda: ScriptedLLM([]), store=seeded_store, policy_index=EmptyPolicyIndex()
    )
    out = io.StringIO()

    status = await run_console(
        app.conversations, discord_id="42", roles={"Support Staff"}, stdin=io.StringIO(LINES), out=out
    )

    printed = out.getvalue()
    assert status == 0
    assert "created [ko+en]" in printed
    assert "- eta [ko+en]" in printed  # the listing `/reply` prints
    assert "/reply eta date=…" in printed  # the missing value, with the line to type
    assert "루나님, ORD001은(는) 3월5일에 도착합니다." in printed
