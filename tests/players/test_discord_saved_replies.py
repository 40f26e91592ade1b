"""Saved replies against the loopback Discord: `/reply` offers the saved names through Discord's
autocomplete (staff only), and sends the chosen reply, filled, into the conversation it is typed in."""

from __future__ import annotations

from sqlalchemy import select

from bot.llm.scripted import ScriptedLLM
from bot.store import AuditEntry
from bot.store.saved_replies import save_reply
from tests.support.fake_discord import EPHEMERAL, FakeDiscord

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
STAFF_ID = 42
LUNA = 9001


async def saved(bot) -> None:
    store = bot.app.store
    await save_reply(
        store,
        name="delay-coupon",
        text_ko="{player}님, {order} 지연 보상 쿠폰은 {coupon_code}입니다.",
        text_en="Hi {player}, your coupon for {order} is {coupon_code}.",
        actor="staff:42",
    )
    await save_reply(
        store, name="delay-eta", text_ko="{order}은(는) 내일 도착 예정입니다.", text_en="", actor="staff:42"
    )
    await save_reply(store, name="thanks", text_ko="기다려 주셔서 감사합니다.", text_en="", actor="staff:42")


async def test_reply_autocomplete_offers_the_saved_names_that_start_with_what_is_typed(harness, fake):
    bot = await harness.start(ScriptedLLM([]))
    await saved(bot)

    token = await fake.autocomplete(STAFF_ID, SUPPORT, "reply", "name", "del")
    choices = await fake.wait_for(lambda: fake.autocomplete_choices(token), what="the choices")

    assert [c["value"] for c in choices] == ["delay-coupon", "delay-eta"]
    options = {
        o["name"]: o
        for o in next(
            c for c in fake.synced_commands[f"guild:{FakeDiscord.GUILD_ID}"] if c["name"] == "reply"
        )["options"]
    }
    assert options["name"].get("autocomplete") is True


async def test_a_player_gets_no_saved_reply_names(harness, fake):
    bot = await harness.start(ScriptedLLM([]))
    await saved(bot)

    token = await fake.autocomplete(LUNA, SUPPORT, "reply", "name", "")

    assert await fake.wait_for(lambda: fake.autocomplete_choices(token) is not None and [0], what="an answer")
    assert fake.autocomplete_choices(token) == []


async def test_reply_sends_the_filled_reply_into_the_taken_over_channel(harness, fake):
    bot = await harness.start(ScriptedLLM([]), outbox_interval=0.05)
    await saved(bot)
    await bot.app.conversations.memory.append(
        f"discord:{SUPPORT}", {"role": "user", "content": "쿠폰 언제 와요?"}
    )
    handoff = await fake.slash(STAFF_ID, SUPPORT, "handoff", {})
    await fake.wait_for(lambda: fake.interaction_texts(handoff), what="the handoff")

    token = await fake.slash(
        STAFF_ID,
        SUPPORT,
        "reply",
        {"name": "delay-coupon", "values": "player=루나 order=ORD001 coupon_code=ARCA-7K2Q"},
    )
    [(ack, flags)] = await fake.wait_for(lambda: fake.interaction_texts(token), what="the acknowledgement")
    expected = "루나님, ORD001 지연 보상 쿠폰은 ARCA-7K2Q입니다."
    posted = await fake.wait_for(
        lambda: [m["content"] for m in fake.bot_messages(SUPPORT) if expected in m["content"]],
        what="the reply",
    )

    assert flags & EPHEMERAL and expected in ack
    assert (
        len(posted) == 1
        and posted[0].startswith("**상담원 · Staff ")
        and posted[0].endswith(f"**\n{expected}")
    )
    async with bot.app.store.session() as s:
        used = (await s.execute(select(AuditEntry).where(AuditEntry.action == "reply.used"))).scalars().all()
    assert [(u.target, u.thread_id) for u in used] == [("delay-coupon", f"discord:{SUPPORT}")]


async def test_a_missing_value_is_refused_ephemerally_and_nothing_is_posted(harness, fake):
    bot = await harness.start(ScriptedLLM([]), outbox_interval=0.05)
    await saved(bot)
    before = len(fake.bot_messages(SUPPORT))

    token = await fake.slash(STAFF_ID, SUPPORT, "reply", {"name": "delay-eta"})
    [(text, flags)] = await fake.wait_for(lambda: fake.interaction_texts(token), what="the refusal")

    assert flags & EPHEMERAL and "{order}" in text and "/reply delay-eta order=" in text
    assert len(fake.bot_messages(SUPPORT)) == before
