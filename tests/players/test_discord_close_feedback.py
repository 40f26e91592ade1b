"""The auto-close notice in Discord carries 👍 / 👎 (the answer buttons' mechanism) for the conversation's
latest answer; the player's press is recorded as feedback like any other, against the loopback Discord."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from bot.analytics.record import record_run
from bot.llm.scripted import ScriptedLLM
from bot.store import Escalation, Feedback, ThreadMessage
from tests.support.fake_discord import FakeDiscord

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
THREAD = f"discord:{SUPPORT}"


async def test_the_closing_notice_asks_for_a_rating_with_buttons_that_record_it(harness, fake):
    running = await harness.start(ScriptedLLM([]))
    store = running.conversations.store
    long_ago = datetime.now(UTC) - timedelta(hours=49)
    assert await record_run(
        store,
        run_id="run-close-1",
        thread_id=THREAD,
        player="player:P100",
        started_at=long_ago - timedelta(seconds=5),
        answered_at=long_ago,
        locale="ko",
        outcomes=(),
    )
    async with store.session() as s:
        s.add(ThreadMessage(thread_id=THREAD, role="user", content="환불해 주세요", created_at=long_ago))
        s.add(Escalation(thread_id=THREAD, player_id="P100", summary="s", status="open", created_at=long_ago))
        await s.commit()
    await running.stop()  # a restart: the second process finds the silent escalation and closes it

    again = await harness.start(ScriptedLLM([]))
    await fake.wait_for(lambda: fake.bot_messages(SUPPORT), what="the closing notice")
    [notice] = fake.bot_messages(SUPPORT)
    assert notice["content"].startswith("답장이 없어 이 상담을 종료합니다.")
    assert fake.buttons(int(notice["id"])) == ["arca:fb:up:run-close-1", "arca:fb:down:run-close-1"]

    token = await fake.press(9001, int(notice["id"]), "arca:fb:up:run-close-1")
    await fake.wait_for(lambda: fake.interaction_texts(token), what="the thanks")
    async with again.conversations.store.session() as s:
        votes = [(f.run_id, f.vote) for f in (await s.execute(select(Feedback))).scalars()]
    assert votes == [("run-close-1", 1)]
