"""Staff replies typed in the console reach the player's Discord channel: the console writes the store
outbox, the Discord process that owns the channel posts each row exactly once under the staff name."""

from __future__ import annotations

import asyncio

import httpx
from sqlalchemy import select

from bot.llm.scripted import ScriptedLLM
from bot.serving.web.app import WebDeps, create_app
from bot.serving.web.startup import WebServer
from bot.staff.console import mint_link
from bot.store.models import StaffOutbox
from bot.store.outbox import OutboxPoller, claim_reply, enqueue_reply, pending_replies
from bot.web_kit.identity import IdentityService
from tests.support.fake_discord import FakeDiscord
from tests.support.staff_console import CSRF, post_login
from tests.support.web import SECRET

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
STAFF = FakeDiscord.STAFF_CHANNEL
THREAD = f"discord:{SUPPORT}"


async def _delivered_at(store, reply_id: int):
    async with store.session() as s:
        return (
            await s.execute(select(StaffOutbox.delivered_at).where(StaffOutbox.id == reply_id))
        ).scalar_one()


async def test_a_console_reply_is_posted_in_the_taken_over_channel_and_the_bot_stays_silent(harness, fake):
    bot = await harness.start(ScriptedLLM([]), outbox_interval=0.05)
    token = await fake.slash(42, STAFF, "handoff", {"channel": SUPPORT})
    await fake.wait_for(lambda: fake.interaction_texts(token), what="the handoff reply")
    await fake.user_says(SUPPORT, 9001, "상담원님 계신가요?")

    async def stored() -> bool:
        return any(r.content == "상담원님 계신가요?" for r in await bot.conversations.memory.recent(THREAD))

    await fake.wait_for(stored, what="the paused message to be stored")
    reply_id = await enqueue_reply(bot.conversations.store, THREAD, "Mina", "지금 확인 중입니다.")

    posted = await fake.wait_for(lambda: fake.bot_messages(SUPPORT), what="the staff reply in the channel")
    assert [m["content"] for m in posted] == ["**상담원 · Staff Mina**\n지금 확인 중입니다."]
    assert await _delivered_at(bot.conversations.store, reply_id) is not None
    await asyncio.sleep(0.3)  # several more polls: the row is not posted again, the bot says nothing
    assert len(fake.bot_messages(SUPPORT)) == 1
    await bot.idle()


async def test_rows_of_channels_this_process_does_not_see_are_left_for_their_owner(harness, fake):
    bot = await harness.start(ScriptedLLM([]), outbox_interval=0.05)
    store = bot.conversations.store
    other = await enqueue_reply(store, "discord:999999", "Mina", "다른 채널")
    web = await enqueue_reply(store, "web:p100:main", "Mina", "웹")
    await fake.wait_for(lambda: bot.bot.is_ready(), what="ready")
    assert await bot.bot.outbox.deliver_pending() == 0
    assert await _delivered_at(store, other) is None and await _delivered_at(store, web) is None
    assert [r.id for r in await pending_replies(store, "discord:")] == [other]


async def test_two_deliverers_racing_on_one_row_post_it_once(harness):
    bot = await harness.start(ScriptedLLM([]))
    store = bot.conversations.store
    await bot.bot.outbox.stop()
    posted: list[tuple[str, int]] = []

    def poller(name: str) -> OutboxPoller:
        async def deliver(reply) -> None:
            await asyncio.sleep(0.01)
            posted.append((name, reply.id))

        return OutboxPoller(store, "discord:", deliver)

    reply_id = await enqueue_reply(store, THREAD, "Mina", "한 번만")
    first, second = poller("a"), poller("b")
    counts = await asyncio.gather(*(p.deliver_pending() for p in (first, second, first, second)))
    assert sum(counts) == 1 and [r for _, r in posted] == [reply_id]
    assert not await claim_reply(store, reply_id), "a delivered row cannot be claimed again"


async def test_a_failed_post_gives_the_row_back_for_the_next_poll(harness):
    bot = await harness.start(ScriptedLLM([]))
    store = bot.conversations.store
    await bot.bot.outbox.stop()
    attempts: list[int] = []

    async def flaky(reply) -> None:
        attempts.append(reply.id)
        if len(attempts) == 1:
            raise RuntimeError("Discord said 503")

    poller = OutboxPoller(store, "discord:", flaky)
    reply_id = await enqueue_reply(store, THREAD, "Mina", "재시도")
    assert await poller.deliver_pending() == 0
    assert await _delivered_at(store, reply_id) is None
    assert await poller.deliver_pending() == 1
    assert attempts == [reply_id, reply_id] and await _delivered_at(store, reply_id) is not None


async def test_a_reply_typed_in_the_web_console_arrives_in_the_loopback_discord_channel(harness, fake):
    running = await harness.start(ScriptedLLM([]), outbox_interval=0.05)
    conv = running.conversations
    deps = WebDeps.from_settings(running.bot.settings, conv, IdentityService(SECRET))
    server = await WebServer(create_app(deps), "127.0.0.1", 0).start()
    try:
        url = await mint_link(conv.store, staff_id="4242", staff_name="Mina", base=server.url)
        async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
            r = await post_login(client, url.split("token=", 1)[1])
            assert r.status_code == 303, r.text
            csrf = CSRF.search((await client.get("/staff/conversations")).text).group(1)
            await client.post(f"/staff/conversations/{THREAD}/handoff", data={"csrf": csrf})
            assert await conv.is_paused(THREAD)
            await fake.user_says(SUPPORT, 9001, "환불 문의요")  # paused: stored, the bot says nothing
            r = await client.post(
                f"/staff/conversations/{THREAD}/reply", data={"csrf": csrf, "text": "네, 바로 도와드릴게요."}
            )
            assert r.status_code == 303
        posted = await fake.wait_for(lambda: fake.bot_messages(SUPPORT), what="the console reply in Discord")
        assert [m["content"] for m in posted] == ["**상담원 · Staff Mina**\n네, 바로 도와드릴게요."]
        await running.idle()
        assert len(fake.bot_messages(SUPPORT)) == 1, "only the staff reply: the bot stayed silent"
    finally:
        await server.stop()
