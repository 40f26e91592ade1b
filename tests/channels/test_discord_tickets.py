"""Ticket threads end to end (issue 26): the real discord.py client against the fake Discord, which answers
thread and forum routes in Discord's shapes. A player's first message in a ticket channel opens a private
thread only they, the bot and staff can read; the bot answers there; staff join on escalation and
takeover; closing archives and locks it; a second message is pointed to the open ticket; the open ticket
survives a restart; two processes racing for one message open one thread."""

from __future__ import annotations

from typing import Any

from bench.fake_discord import FakeDiscord
from bench.fake_discord.threads import PRIVATE_THREAD
from bot.llm.scripted import ScriptedLLM

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
FORUM = FakeDiscord.FORUM_CHANNEL
STAFF_CHANNEL = FakeDiscord.STAFF_CHANNEL
BOT = FakeDiscord.BOT_ID
LUNA, KAI, STAFFER = 9001, 9002, 42


def _ticket_settings(harness: Any, **extra: Any) -> Any:
    return harness.settings(ticket_channels=[SUPPORT, FORUM], support_channels=[], **extra)


class Answers:
    """The model factory: each run gets a fresh scripted model that answers the next text; runs counted."""

    def __init__(self, *answers: str) -> None:
        self.queue = list(answers)
        self.runs = 0

    def __call__(self) -> ScriptedLLM:
        self.runs += 1
        return ScriptedLLM([{"final": self.queue.pop(0)}])


def _said(fake: FakeDiscord, channel: int, text: str) -> Any:
    return lambda: any(text in m["content"] for m in fake.bot_messages(channel))


async def _one_thread(fake: FakeDiscord, parent: int = SUPPORT, *, count: int = 1) -> dict[str, Any]:
    await fake.wait_for(lambda: len(fake.threads_in(parent)) >= count, what="the ticket thread")
    return fake.threads_in(parent)[count - 1]


async def test_first_message_opens_a_private_thread_answered_there_and_a_second_is_pointed_to_it(
    harness: Any, fake: FakeDiscord
) -> None:
    answers = Answers("접속 문제를 확인해 볼게요.", "재설치 후에도 그렇다면 알려 주세요.")
    bot = await harness.start(llm_factory=answers, settings=_ticket_settings(harness))

    await fake.user_says(
        SUPPORT, LUNA, "**접속** 문제 @everyone <@42> 도와주세요 [링크](https://evil.example)"
    )
    thread = await _one_thread(fake)
    tid = int(thread["id"])
    await fake.wait_for(_said(fake, tid, "접속 문제를 확인해 볼게요."), what="the answer in the thread")
    await bot.idle()

    # A private thread, named for the player and the topic with no mention, link or markdown in it.
    assert thread["type"] == PRIVATE_THREAD and thread["thread_metadata"]["invitable"] is False
    assert thread["name"].startswith("루나 · 접속 문제"), thread["name"]
    assert not set(thread["name"]) & set("*@<>[]()#`"), thread["name"]
    assert "evil" not in thread["name"]
    # Only the player and the bot are in it; another player cannot read it.
    assert fake.members_of(tid) == {BOT, LUNA}
    assert fake.can_read(LUNA, tid) and not fake.can_read(KAI, tid)
    # The answer is in the thread; the shared channel only gets the pointer to it.
    [pointer] = fake.bot_messages(SUPPORT)
    assert f"<#{tid}>" in pointer["content"] and "접속 문제를 확인" not in pointer["content"]
    assert await bot.conversations.memory.recent(f"discord:{tid}")
    assert not await bot.conversations.memory.recent(f"discord:{SUPPORT}")

    # Writing in the channel again: pointed to the open ticket (in Korean), no second thread, no model call.
    await fake.user_says(SUPPORT, LUNA, "아직 안 됐어요")
    await fake.wait_for(lambda: len(fake.bot_messages(SUPPORT)) == 2, what="the pointer to the open ticket")
    await bot.idle()
    redirect = fake.bot_messages(SUPPORT)[-1]["content"]
    assert "이미 열린 상담" in redirect and f"<#{tid}>" in redirect
    assert len(fake.threads_in(SUPPORT)) == 1
    assert answers.runs == 1

    # Writing in the thread is answered there, in the same conversation.
    await fake.user_says(tid, LUNA, "재설치 해봤는데도 안 돼요")
    await fake.wait_for(_said(fake, tid, "재설치 후에도"), what="the follow-up answer")
    await bot.idle()
    assert len(await bot.conversations.memory.recent(f"discord:{tid}")) >= 4


async def test_an_english_player_is_pointed_to_the_open_ticket_in_english(
    harness: Any, fake: FakeDiscord
) -> None:
    bot = await harness.start(
        llm_factory=Answers("Let me check the login problem."), settings=_ticket_settings(harness)
    )
    await fake.user_says(SUPPORT, KAI, "I cannot log in")
    thread = await _one_thread(fake)
    await fake.wait_for(_said(fake, int(thread["id"]), "Let me check"), what="the answer")
    assert thread["name"] == "카이 · I cannot log in"
    await fake.user_says(SUPPORT, KAI, "hello?")
    await fake.wait_for(lambda: len(fake.bot_messages(SUPPORT)) == 2, what="the pointer")
    await bot.idle()
    assert "You already have an open ticket" in fake.bot_messages(SUPPORT)[-1]["content"]
