"""Reaching a person from Discord against the loopback Discord, with no model call: the words
"상담원 연결" in the support channel, and the persistent "Talk to a person" button under an answer
(also after a restart)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from bot.llm.scripted import ScriptedLLM
from bot.store import Escalation
from tests.support.fake_discord import FakeDiscord

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
STAFF = FakeDiscord.STAFF_CHANNEL
PLAYER_THREAD = f"discord:{SUPPORT}"


async def _escalations(running) -> list[tuple[str, str | None]]:
    async with running.conversations.store.session() as s:
        return [(e.thread_id, e.discord_id) for e in (await s.execute(select(Escalation))).scalars()]


async def test_the_words_reach_staff_without_the_model(harness, fake):
    llm = ScriptedLLM([])
    running = await harness.start(llm)
    await fake.user_says(SUPPORT, 9001, "상담원 연결해 주세요")
    await fake.wait_for(lambda: fake.bot_messages(STAFF), what="the escalation card")
    await fake.wait_for(
        lambda: any("상담원 연결을 요청했습니다" in m["content"] for m in fake.bot_messages(SUPPORT)),
        what="the player's notice",
    )
    await running.idle()
    assert sum(llm.calls.values()) == 0
    [card] = fake.bot_messages(STAFF)
    assert f"arca:ho:take:{PLAYER_THREAD}" in fake.buttons(int(card["id"]))
    assert await _escalations(running) == [(PLAYER_THREAD, "9001")]


async def test_the_button_under_an_answer_escalates_also_after_a_restart(harness, fake):
    llm = ScriptedLLM([{"final": "안녕하세요"}, {"answer": "무엇을 도와드릴까요?"}])
    running = await harness.start(llm)
    await fake.user_says(SUPPORT, 9001, "안녕")
    await fake.wait_for(
        lambda: any(fake.buttons(int(m["id"])) for m in fake.bot_messages(SUPPORT)),
        what="the answer's buttons",
    )
    await running.idle()
    calls = sum(llm.calls.values())
    [answer] = [m for m in fake.bot_messages(SUPPORT) if fake.buttons(int(m["id"]))]
    button = f"arca:person:{PLAYER_THREAD}"
    assert button in fake.buttons(int(answer["id"]))

    token = await fake.press(9001, int(answer["id"]), button)
    await fake.wait_for(lambda: fake.interactions[token]["followups"], what="the notice after the press")
    [(text, flags)] = [t for t in fake.interaction_texts(token) if t[0]]
    assert text.startswith("상담원 연결을 요청했습니다(접수 번호 #1)") and not flags & 64, (
        "posted for all to see"
    )
    await fake.wait_for(lambda: fake.bot_messages(STAFF), what="the escalation card")
    assert sum(llm.calls.values()) == calls, "the press asked no model"

    await running.stop()
    again = await harness.start(ScriptedLLM([]))
    token = await fake.press(9001, int(answer["id"]), button)
    await fake.wait_for(lambda: fake.interactions[token]["followups"], what="the press after a restart")
    # The button still answers after the restart; the request is open, so it names that ticket again.
    assert fake.interaction_texts(token)[-1][0].startswith("이미 상담원 연결을 요청하셨습니다(접수 번호 #1)")
    assert await _escalations(again) == [(PLAYER_THREAD, "9001")]


async def test_an_escalation_about_to_miss_its_target_is_reminded_in_the_staff_channel_once(harness, fake):
    first = await harness.start(ScriptedLLM([]))
    async with first.conversations.store.session() as s:
        s.add(
            Escalation(
                thread_id=PLAYER_THREAD,
                summary="환불 문의",
                status="open",
                created_at=datetime.now(UTC) - timedelta(minutes=55),  # the 60-minute target is 5 min away
            )
        )
        await s.commit()
    await first.stop()
    running = await harness.start(ScriptedLLM([]))  # the watch checks as the bot starts
    await fake.wait_for(lambda: fake.bot_messages(STAFF), what="the SLA reminder")
    [post] = fake.bot_messages(STAFF)
    assert post["content"].startswith(f"⏰ **SLA · Escalation #1** · <#{SUPPORT}> · 첫 응답 / first response")
    await running.stop()
    again = await harness.start(ScriptedLLM([]))  # after a restart the audit says it was sent
    await fake.wait_for(lambda: again.bot.sla_watch.checks >= 1, what="the first check after the restart")
    assert len(fake.bot_messages(STAFF)) == 1


async def test_a_silent_escalated_channel_is_closed_with_a_notice(harness, fake):
    from bot.store import ThreadMessage

    first = await harness.start(ScriptedLLM([]))
    long_ago = datetime.now(UTC) - timedelta(hours=49)
    async with first.conversations.store.session() as s:
        s.add(ThreadMessage(thread_id=PLAYER_THREAD, role="user", content="상담원 연결", created_at=long_ago))
        s.add(Escalation(thread_id=PLAYER_THREAD, summary="s", status="open", created_at=long_ago))
        await s.commit()
    await first.stop()
    await harness.start(ScriptedLLM([]))
    await fake.wait_for(lambda: fake.bot_messages(SUPPORT), what="the closing notice")
    [notice] = fake.bot_messages(SUPPORT)
    assert (
        notice["content"].startswith("답장이 없어 이 상담을 종료합니다.") and "👍 / 👎" in notice["content"]
    )
