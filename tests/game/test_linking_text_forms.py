"""The text forms of `/link` (DESIGN.md §8): staff's `/link <user> <player>` in the console and typed in a
Discord channel keeps working; a member's `/link` typed as a message gets the code privately; a player
who is not on Discord is told where codes come from; a member's text form with arguments is denied."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from bot.app import App, build_app
from bot.config import load_settings
from bot.conversations import Incoming
from bot.llm.scripted import ScriptedLLM
from bot.store import AuditEntry, Store
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.support.fake_discord import FakeDiscord
from tests.support.game_events import CODE
from tests.support.surface import RecordingSurface

STAFF_ROLE = "Support Staff"


@pytest.fixture
async def app(seeded_store: Store, tmp_path: Any) -> App:
    settings = load_settings(data_dir=tmp_path / "var", edit_interval=0.0)
    return await build_app(
        settings, llm_factory=lambda: ScriptedLLM([]), store=seeded_store, policy_index=EmptyPolicyIndex()
    )


async def _say(app: App, text: str, *, who: str, staff: bool = False, thread: str = "console:main"):
    actor = await app.conversations.resolve_actor(who, {STAFF_ROLE} if staff else set())
    return await app.conversations.handle(Incoming(thread, actor, text), RecordingSurface())


async def test_staff_link_in_the_console_still_moves_a_link(app):
    outcome = await _say(app, "/link 9001 P900", who="42", staff=True)

    assert outcome.kind == "command" and outcome.reply.ok, outcome.reply.text
    assert await app.store.players.id_for_discord("9001") == "P900"


async def test_a_member_with_arguments_in_text_is_denied_before_they_are_read(app):
    outcome = await _say(app, "/link 9001 P900", who="9001", thread="discord:1")

    assert outcome.reply.denied
    assert await app.store.players.id_for_discord("9001") == "P100"
    async with app.store.session() as s:
        rows = (
            (await s.execute(select(AuditEntry).where(AuditEntry.action == "staff.denied"))).scalars().all()
        )
    assert [r.target for r in rows] == ["/link"]


async def test_a_member_typing_link_in_a_discord_channel_gets_a_code(app):
    outcome = await _say(app, "/link", who="9009", thread="discord:1")

    assert outcome.kind == "command" and outcome.reply.ok
    assert CODE.search(outcome.reply.text)


async def test_outside_discord_the_player_is_told_where_codes_come_from(app):
    outcome = await _say(app, "/link", who="9009", thread="console:main")

    assert not outcome.reply.ok and CODE.search(outcome.reply.text) is None
    assert "Discord" in outcome.reply.text


async def test_link_typed_as_a_message_in_discord_is_answered_privately(harness, fake):
    await harness.start(ScriptedLLM([]))

    await fake.user_says(FakeDiscord.SUPPORT_CHANNEL, 9009, "/link")
    dm = await fake.wait_for(
        lambda: fake.channel_messages(830_000_000_000_000_000 + 9009, author_id=FakeDiscord.BOT_ID),
        what="the code by DM",
    )

    assert CODE.search(dm[0]["content"])
    assert fake.bot_messages(FakeDiscord.SUPPORT_CHANNEL) == [], "never in the public channel"
