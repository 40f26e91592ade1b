"""Take-over from the browser, end to end with Discord: the real discord.py bot against the loopback fake
Discord and the web server on the same conversations. Staff sign in through a link, take a support
channel over, the player's next message shows live and the bot stays silent, the reply typed in the page
is posted in the Discord channel under the staff name and kept in the history, and after hand back the
bot answers again; every step is in the audit log under the staff member."""

from __future__ import annotations

from types import SimpleNamespace

from playwright.async_api import expect
from sqlalchemy import select

from bot.llm.scripted import ScriptedLLM
from bot.serving.web.app import WebDeps, create_app
from bot.serving.web.startup import WebServer
from bot.store import AuditEntry
from bot.web_kit.identity import IdentityService
from tests.support.fake_discord import FakeDiscord
from tests.support.staff_console import open_console, shot
from tests.support.web import SECRET

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
THREAD = f"discord:{SUPPORT}"
PLAYER = 9001
FIRST = "안녕하세요, 어떤 주문인지 알려 주시겠어요?"
AFTER = "다시 봇이 도와드릴게요."
REPLY = "상담원 미나입니다. 환불 건은 제가 바로 처리해 드릴게요."


async def test_take_over_a_discord_channel_reply_from_the_browser_and_hand_back(
    browser,
    harness,
    fake,
) -> None:
    answers = iter([FIRST, AFTER])  # one scripted model per run
    running = await harness.start(
        llm_factory=lambda: ScriptedLLM([{"final": next(answers)}]), outbox_interval=0.05
    )
    conv = running.conversations
    deps = WebDeps.from_settings(running.bot.settings, conv, IdentityService(SECRET))
    server = await WebServer(create_app(deps), "127.0.0.1", 0).start()
    try:
        await fake.user_says(SUPPORT, PLAYER, "환불하고 싶어요")
        await fake.wait_for(lambda: fake.bot_messages(SUPPORT), what="the bot's first answer")
        await running.idle()
        page = await open_console(browser, SimpleNamespace(conversations=conv, url=server.url))
        row = page.locator(f'tr[data-thread="{THREAD}"]')
        await expect(row).to_contain_text(FIRST)
        await row.get_by_role("link").click()
        await expect(page.locator("h1")).to_have_text(THREAD)
        await page.get_by_role("button", name="운영진이 이어받기").click()
        await expect(page.locator(".actions .state-handed_off")).to_be_visible()
        assert await conv.is_paused(THREAD)

        await fake.user_says(SUPPORT, PLAYER, "상담원님 계신가요?")
        await expect(page.locator(".history .m-user").last).to_contain_text("상담원님 계신가요?")
        await page.get_by_label("답장").fill(REPLY)
        await page.get_by_role("button", name="보내기").click()
        await expect(page.locator(".history .m-staff")).to_contain_text(REPLY)

        posted = await fake.wait_for(
            lambda: [m for m in fake.bot_messages(SUPPORT) if REPLY in m["content"]], what="the staff reply"
        )
        assert [m["content"] for m in posted] == [f"**상담원 · Staff Mina**\n{REPLY}"]
        await running.idle()
        assert [m["content"] for m in fake.bot_messages(SUPPORT)][:1] == [FIRST]
        assert len(fake.bot_messages(SUPPORT)) == 2, "the bot stayed silent while staff held the channel"
        history = [(r.role, r.content, r.name) for r in await conv.memory.recent(THREAD)]
        assert ("assistant", REPLY, "staff:4242") in history
        await shot(page, "discord-take-over")

        await page.get_by_role("button", name="봇에게 돌려주기").click()
        await expect(page.get_by_role("button", name="운영진이 이어받기")).to_be_visible()
        assert not await conv.is_paused(THREAD)
        await fake.user_says(SUPPORT, PLAYER, "감사합니다")
        await fake.wait_for(
            lambda: any(AFTER in m["content"] for m in fake.bot_messages(SUPPORT)), what="the bot again"
        )
        await running.idle()
        async with conv.store.session() as s:
            rows = (
                await s.execute(
                    select(AuditEntry.actor, AuditEntry.action)
                    .where(AuditEntry.thread_id == THREAD, AuditEntry.actor == "staff:4242")
                    .order_by(AuditEntry.id)
                )
            ).all()
        actions = [a for _, a in rows if a.startswith(("staff.", "console."))]
        assert actions == ["staff./handoff", "console.reply", "staff./resume"], actions
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()
    finally:
        await server.stop()
