"""Open incidents' notices in the opted-in support channels (`ARCA_INCIDENT_NOTICE_CHANNELS`), against
the loopback Discord: posted once, the same message edited on an update and on the close, never posted
again after a restart; a channel that did not opt in gets nothing."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.incidents import parse_scope
from bot.llm.scripted import ScriptedLLM
from bot.store import Store, utcnow
from tests.support.fake_discord import FakeDiscord

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
GENERAL = FakeDiscord.GENERAL_CHANNEL


def _notices(fake: FakeDiscord, channel: int) -> list[dict[str, Any]]:
    return [m for m in fake.bot_messages(channel) if "장애 공지" in m["content"] or "해결됨" in m["content"]]


async def test_a_notice_is_posted_once_edited_on_update_and_close_and_kept_across_a_restart(harness, fake):
    settings = harness.settings(incident_notice_channels=[SUPPORT])
    first = await harness.start(ScriptedLLM([]), settings=settings, outbox_interval=0.05)
    store = first.conversations.store
    incident = await store.incidents.open(
        title="서버 점검 연장",
        notice_ko="점검이 15시까지 연장됩니다.",
        notice_en="Maintenance runs until 15:00.",
        scope=parse_scope("all"),
        actor="staff:42",
        now=utcnow(),
    )
    await fake.wait_for(lambda: _notices(fake, SUPPORT), what="the notice post")
    [post] = _notices(fake, SUPPORT)
    assert "점검이 15시까지" in post["content"] and "Maintenance runs until 15:00." in post["content"]

    await store.incidents.update_notice(
        incident.id, notice_ko="점검이 17시까지 연장됩니다.", notice_en="Until 17:00.", actor="staff:42"
    )
    mid = int(post["id"])
    await fake.wait_for(lambda: "17시" in fake.messages[mid]["content"], what="the edited notice")
    await first.stop()

    second = await harness.start(ScriptedLLM([]), settings=settings, outbox_interval=0.05)
    await asyncio.sleep(0.5)  # several polls of the new process
    assert len(_notices(fake, SUPPORT)) == 1, "a restart does not post the notice again"
    await second.conversations.store.incidents.close(incident.id, actor="staff:42", now=utcnow())
    await fake.wait_for(lambda: "해결됨" in fake.messages[mid]["content"], what="the resolved edit")
    assert len(_notices(fake, SUPPORT)) == 1 and _notices(fake, GENERAL) == []


async def test_two_pollers_at_once_claim_a_channels_post_once(seeded_store: Store) -> None:
    incident = await seeded_store.incidents.open(
        title="t", notice_ko="공지", notice_en="", scope=parse_scope("all"), actor="s", now=utcnow()
    )
    claims = await asyncio.gather(
        *(seeded_store.incidents.posts.claim_new(incident.id, "1", "1:open") for _ in range(4))
    )
    assert len([c for c in claims if c is not None]) == 1
