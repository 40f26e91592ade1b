"""Ticket threads end to end (issue 26): the real discord.py client against the fake Discord, which answers
thread and forum routes in Discord's shapes. A player's first message in a ticket channel opens a private
thread only they, the bot and staff can read; the bot answers there; staff join on escalation and
takeover; closing archives and locks it; a second message is pointed to the open ticket; the open ticket
survives a restart; two processes racing for one message open one thread."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.desk.auto_close import CLOSE_ACTION, close_idle
from bot.llm.scripted import ScriptedLLM
from bot.players.discord_app.feedback import tell_closed
from bot.store.tickets import open_ticket, ticket_by_thread
from tests.support.fake_discord import FakeDiscord, FakeUser
from tests.support.fake_discord.threads import PRIVATE_THREAD

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
FORUM = FakeDiscord.FORUM_CHANNEL
STAFF_CHANNEL = FakeDiscord.STAFF_CHANNEL
BOT = FakeDiscord.BOT_ID
LUNA, KAI, STAFFER = 9001, 9002, 42


def _ticket_settings(harness: Any, **extra: Any) -> Any:
    return harness.settings(ticket_channels=[SUPPORT, FORUM], support_channels=[], **extra)


class Answers:
    """The model factory: each run gets a fresh scripted model that answers the next text; runs counted."""

    def __init__(self, *scripts: str | list[dict[str, Any]]) -> None:
        self.queue = list(scripts)
        self.runs = 0

    def __call__(self) -> ScriptedLLM:
        self.runs += 1
        script = self.queue.pop(0)
        return ScriptedLLM([{"final": script}] if isinstance(script, str) else script)


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

    # Staff write in the ticket channel as before (a text-form command here): no ticket for them.
    await fake.user_says(SUPPORT, STAFFER, "/audit 5")
    await fake.wait_for(lambda: fake.calls_to("POST", "/users/@me/channels"), what="the staff reply by DM")
    await bot.idle()
    assert len(fake.threads_in(SUPPORT)) == 1


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


ESCALATE = [
    {"tool": "escalate_to_staff", "args": {"summary": "접속 불가, 재설치로도 해결 안 됨"}},
    {"final": "운영진에게 전달했습니다."},
]


async def test_escalation_brings_staff_into_the_thread_and_a_takeover_adds_the_staffer(
    harness: Any, fake: FakeDiscord
) -> None:
    late = fake.add_user(FakeUser(43, "late-staffer"))
    bot = await harness.start(
        llm_factory=Answers("접속 문제를 확인해 볼게요.", ESCALATE), settings=_ticket_settings(harness)
    )
    await fake.user_says(SUPPORT, LUNA, "접속 문제 도와주세요")
    tid = int((await _one_thread(fake))["id"])
    await fake.wait_for(_said(fake, tid, "확인해 볼게요"), what="the first answer")
    await bot.idle()
    assert not fake.can_read(STAFFER, tid), "staff are not in the thread before an escalation"

    await fake.user_says(tid, LUNA, "담당자 연결해 주세요 재설치해도 안 돼요")
    await fake.wait_for(lambda: STAFFER in fake.members_of(tid), what="staff added on escalation")
    await bot.idle()
    call = next(c for c in fake.calls_to("POST", rf"/channels/{tid}/messages$") if "<@&" in c.body["content"])
    assert call.body["allowed_mentions"] == {"parse": [], "roles": [fake.STAFF_ROLE]}
    assert call.body["flags"] & 4096, "the role mention is silent (the staff channel card is the alert)"
    assert "상담팀을 이 스레드에 불렀어요" in call.body["content"]
    assert fake.members_of(tid) == {BOT, LUNA, STAFFER} and fake.can_read(STAFFER, tid)
    assert not fake.can_read(KAI, tid)

    # A staffer who got the role later takes over from the card: they are added too.
    late.roles.append(fake.STAFF_ROLE)
    [card] = [
        m
        for m in fake.bot_messages(STAFF_CHANNEL)
        if f"arca:ho:take:discord:{tid}" in fake.buttons(int(m["id"]))
    ]
    await fake.press(43, int(card["id"]), f"arca:ho:take:discord:{tid}")
    await fake.wait_for(lambda: 43 in fake.members_of(tid), what="the staffer who took over")
    assert fake.members_of(tid) == {BOT, LUNA, STAFFER, 43}


async def _open_and_answer(
    fake: FakeDiscord, bot: Any, *, count: int = 1, text: str = "접속 문제 도와주세요"
) -> int:
    await fake.user_says(SUPPORT, LUNA, text)
    tid = int((await _one_thread(fake, count=count))["id"])
    await fake.wait_for(lambda: len(fake.bot_messages(tid)) >= 2, what="the answer in the ticket")
    await bot.idle()
    return tid


def _clock(bot: Any, clock: Any) -> None:
    """Move the app's clock (the runs' deps hold it; the ticket desk reads it from there)."""
    bot.conversations.deps = replace(bot.conversations.deps, clock=clock)


def _archived_and_locked(fake: FakeDiscord, tid: int) -> bool:
    meta = fake.threads[tid]["thread_metadata"]
    return meta["archived"] and meta["locked"]


async def test_auto_closed_escalation_archives_and_locks_the_thread_and_the_next_message_opens_a_new_ticket(
    harness: Any, fake: FakeDiscord
) -> None:
    bot = await harness.start(
        llm_factory=Answers("확인해 볼게요.", "새 문의도 확인할게요."), settings=_ticket_settings(harness)
    )
    tid = await _open_and_answer(fake, bot)
    desk = bot.bot.tickets
    assert await desk.check() == [], "a ticket just answered stays open"

    # The desk closed the escalation (bot.desk.auto_close audits it, in whichever process): the ticket closes.
    await bot.app.store.audit(
        actor="desk", action=CLOSE_ACTION, thread_id=f"discord:{tid}", target="escalation:1"
    )
    assert await desk.check() == [], "the closing notice goes out first"
    soon = datetime.now(UTC) + timedelta(minutes=1)
    _clock(bot, lambda: soon)
    [(_, reason)] = await desk.check()
    assert reason == "escalation_closed"
    await fake.wait_for(lambda: _archived_and_locked(fake, tid), what="the thread archived and locked")
    assert await desk.check() == [], "closed once"
    _clock(bot, lambda: datetime.now(UTC))

    tid2 = await _open_and_answer(fake, bot, count=2, text="다른 문제가 생겼어요")
    assert tid2 != tid and "새 문의도 확인할게요." in fake.bot_messages(tid2)[-1]["content"]
    assert not any("이미 열린 상담" in m["content"] for m in fake.bot_messages(SUPPORT))


async def test_a_quiet_ticket_closes_with_a_notice_and_a_thread_staff_archive_closes_its_ticket(
    harness: Any, fake: FakeDiscord
) -> None:
    bot = await harness.start(
        llm_factory=Answers("확인해 볼게요.", "다시 확인할게요.", "또 확인할게요."),
        settings=_ticket_settings(harness, ticket_idle_close_hours=24),
    )
    tid = await _open_and_answer(fake, bot)
    desk = bot.bot.tickets
    now = datetime.now(UTC)
    _clock(bot, lambda: now + timedelta(hours=23))
    assert await desk.check() == []
    _clock(bot, lambda: now + timedelta(hours=25))
    [(_, reason)] = await desk.check()
    assert reason == "idle"
    await fake.wait_for(lambda: _archived_and_locked(fake, tid), what="the quiet thread archived")
    assert "상담을 닫습니다" in fake.bot_messages(tid)[-1]["content"]
    _clock(bot, lambda: datetime.now(UTC))

    # Staff archive a ticket thread by hand in Discord: its ticket is closed, a new message opens a new one.
    tid2 = await _open_and_answer(fake, bot, count=2)
    await fake.staff_archives(tid2)
    store = bot.app.store
    await fake.wait_for(lambda: _closed(store, tid2), what="the archived ticket closed")
    assert tid2 not in desk.threads
    await fake.wait_for(lambda: _archived_and_locked(fake, tid2), what="the archived thread locked")

    # Staff delete a ticket thread: its ticket is closed too (no pointer to a thread that is gone).
    tid3 = await _open_and_answer(fake, bot, count=3)
    await fake.staff_deletes(tid3)
    await fake.wait_for(lambda: _closed(store, tid3), what="the deleted ticket closed")


async def _closed(store: Any, tid: int) -> bool:
    ticket = await ticket_by_thread(store, tid)
    return ticket is not None and not ticket.is_open


@pytest.mark.parametrize("cached", [True, False], ids=["thread-in-guild-create", "thread-unknown-to-client"])
async def test_a_restarted_bot_finds_the_open_ticket_in_the_database(
    harness: Any, fake: FakeDiscord, cached: bool
) -> None:
    settings = _ticket_settings(harness)
    first = await harness.start(llm_factory=Answers("확인해 볼게요."), settings=settings)
    tid = await _open_and_answer(fake, first)
    await first.stop()
    fake.threads_on_connect = cached  # uncached: the message comes from a channel the client never saw

    answers = Answers("이어서 확인할게요.")
    second = await harness.start(llm_factory=answers, settings=settings)
    assert second.bot.tickets.threads == {tid}
    await fake.user_says(SUPPORT, LUNA, "아직 안 됐어요")
    await fake.wait_for(_said(fake, SUPPORT, "이미 열린 상담"), what="the pointer after the restart")
    assert f"<#{tid}>" in fake.bot_messages(SUPPORT)[-1]["content"]
    await fake.user_says(tid, LUNA, "재설치 해봤어요")
    await fake.wait_for(_said(fake, tid, "이어서 확인할게요."), what="the answer in the old thread")
    await second.idle()
    assert len(fake.threads_in(SUPPORT)) == 1 and answers.runs == 1


async def test_two_processes_that_both_see_the_first_message_open_one_thread_and_answer_once(
    harness: Any, fake: FakeDiscord, db_url: str
) -> None:
    settings = _ticket_settings(harness, db_url=db_url)
    a_answers, b_answers = (Answers("확인해 볼게요.", "Checking.", "Checking.") for _ in "ab")
    a = await harness.start(llm_factory=a_answers, settings=settings)
    b = await harness.start(llm_factory=b_answers, settings=settings)
    assert len(fake.sockets) == 2

    await fake.user_says(SUPPORT, LUNA, "접속 문제 도와주세요")  # dispatched to both processes
    tid = int((await _one_thread(fake))["id"])
    await fake.wait_for(_said(fake, tid, "확인해 볼게요."), what="the answer")
    await a.idle()
    await b.idle()
    assert len(fake.calls_to("POST", rf"/channels/{SUPPORT}/threads$")) == 1
    assert a_answers.runs + b_answers.runs == 1
    assert len(fake.bot_messages(SUPPORT)) == 1, "one pointer, no redirect for the message that opened it"

    # Two players at once, each seen by both processes: one thread each.
    await asyncio.gather(
        fake.user_says(SUPPORT, KAI, "I cannot log in"), fake.user_says(SUPPORT, 9009, "game crashes")
    )
    await fake.wait_for(lambda: len(fake.threads_in(SUPPORT)) == 3, what="two more tickets")
    await fake.wait_for(lambda: a_answers.runs + b_answers.runs == 3, what="both new tickets answered")
    await a.idle()
    await b.idle()
    assert len(fake.threads_in(SUPPORT)) == 3 and a_answers.runs + b_answers.runs == 3
    assert len(fake.calls_to("POST", rf"/channels/{SUPPORT}/threads$")) == 3


async def test_in_a_forum_the_players_post_becomes_the_ticket_and_a_second_post_is_pointed_to_it(
    harness: Any, fake: FakeDiscord
) -> None:
    answers = Answers("접속 문제를 확인해 볼게요.")
    bot = await harness.start(llm_factory=answers, settings=_ticket_settings(harness))
    post = await fake.user_posts_in_forum(FORUM, LUNA, "@everyone 긴급!!", "**접속** 문제 도와주세요")
    await fake.wait_for(_said(fake, post, "확인해 볼게요."), what="the answer in the post")
    await bot.idle()
    assert fake.threads[post]["name"] == "루나 · 접속 문제 도와주세요", "renamed for the player and the topic"
    assert (await ticket_by_thread(bot.app.store, post)).is_open

    second = await fake.user_posts_in_forum(FORUM, LUNA, "또 질문", "아직 안 돼요")
    await fake.wait_for(lambda: _archived_and_locked(fake, second), what="the second post closed")
    await bot.idle()
    assert f"<#{post}>" in fake.bot_messages(second)[-1]["content"]
    assert answers.runs == 1 and not _archived_and_locked(fake, post)


async def test_when_discord_refuses_the_thread_the_player_is_still_answered_and_can_try_again(
    harness: Any, fake: FakeDiscord
) -> None:
    answers = Answers("채널에서 답합니다.", "이번엔 스레드에서 답합니다.")
    bot = await harness.start(llm_factory=answers, settings=_ticket_settings(harness))
    fake.fail("POST", rf"/channels/{SUPPORT}/threads$", status=403, times=1)  # no Create Private Threads
    await fake.user_says(SUPPORT, LUNA, "접속 문제 도와주세요")
    await fake.wait_for(_said(fake, SUPPORT, "채널에서 답합니다."), what="the answer in the channel")
    await bot.idle()
    assert fake.threads_in(SUPPORT) == []
    assert await open_ticket(bot.app.store, SUPPORT, LUNA) is None, "the claim was released"

    await fake.user_says(SUPPORT, LUNA, "다시 부탁해요")
    tid = int((await _one_thread(fake))["id"])
    await fake.wait_for(_said(fake, tid, "이번엔 스레드에서"), what="the answer in the new thread")


async def test_the_desks_auto_close_of_an_escalated_ticket_posts_its_notice_then_archives_the_thread(
    harness: Any, fake: FakeDiscord
) -> None:
    bot = await harness.start(llm_factory=Answers(ESCALATE), settings=_ticket_settings(harness))
    await fake.user_says(SUPPORT, LUNA, "담당자 연결해 주세요 재설치해도 안 돼요")
    tid = int((await _one_thread(fake))["id"])
    await fake.wait_for(lambda: STAFFER in fake.members_of(tid), what="the escalation")
    await bot.idle()
    desk = bot.bot.tickets
    later = datetime.now(UTC) + timedelta(hours=25)
    _clock(bot, lambda: later)
    assert await desk.check() == [], "an escalation waiting for staff is not closed as quiet"

    # bot.desk.auto_close closes the silent escalation (as the SLA watch does), telling the player first.
    much_later = datetime.now(UTC) + timedelta(hours=49)
    tell = lambda thread_id, text: tell_closed(bot.bot, thread_id, text)  # noqa: E731 - the watch's own
    assert await close_idle(bot.app.store, tell, much_later, timedelta(hours=48))
    _clock(bot, lambda: much_later + timedelta(minutes=1))
    [(_, reason)] = await desk.check()
    assert reason == "escalation_closed"
    await fake.wait_for(lambda: _archived_and_locked(fake, tid), what="the thread archived and locked")
    assert "상담을 종료합니다" in fake.bot_messages(tid)[-1]["content"], "the closing notice came first"
