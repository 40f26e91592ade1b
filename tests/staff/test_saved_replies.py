"""Saved replies through the staff registry's text form (the console and transcripts): staff save, edit,
list, send and delete named replies; unknown variables are refused at save, missing values at use; the
player's language picks the text; a sent reply is kept, queued for the channel and audited."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from bot.app import App, build_app
from bot.config import load_settings
from bot.conversations import Incoming, TurnOutcome
from bot.conversations.recording import RecordingSurface
from bot.llm.scripted import ScriptedLLM
from bot.store import AuditEntry, Escalation, Store, ThreadMessage
from bot.store.outbox import pending_replies
from bot.store.saved_replies import get_reply
from tests.fakes.knowledge import EmptyPolicyIndex

STAFF_ROLE = "Support Staff"
WEB_THREAD = "web:v-mira:main"
DELAY = "delay-coupon"
DELAY_TEXT = (
    "{player}님, {order} 주문 지연 보상으로 쿠폰 {coupon_code}을(를) 드렸습니다. "
    "|| Hi {player}, for the delay of {order} we sent you coupon {coupon_code}."
)


@pytest.fixture
async def app(seeded_store: Store, tmp_path: Any) -> App:
    settings = load_settings(data_dir=tmp_path / "var", edit_interval=0.0)
    return await build_app(
        settings, llm_factory=lambda: ScriptedLLM([]), store=seeded_store, policy_index=EmptyPolicyIndex()
    )


async def say(app: App, text: str, *, channel: str = "console:staff", staff: bool = True) -> TurnOutcome:
    actor = await app.conversations.resolve_actor("42", {STAFF_ROLE} if staff else set(), "지수")
    return await app.conversations.handle(Incoming(channel, actor, text), RecordingSurface())


async def english_player_thread(app: App) -> None:
    """Mira (P300) wrote in English in the widget and was escalated."""
    await app.conversations.memory.append(WEB_THREAD, {"role": "user", "content": "Where is my order?"})
    async with app.store.session() as s, s.begin():
        s.add(Escalation(thread_id=WEB_THREAD, player_id="P300", summary="late order"))


async def audit_actions(store: Store, action: str) -> list[AuditEntry]:
    async with store.session() as s:
        return list((await s.execute(select(AuditEntry).where(AuditEntry.action == action))).scalars())


async def test_an_unknown_variable_is_refused_at_save_and_nothing_is_kept(app: App) -> None:
    outcome = await say(app, "/replies save greet 안녕하세요 {nickname}님")

    assert not outcome.reply.ok
    assert "{nickname}" in outcome.reply.text and "{player}" in outcome.reply.text  # says what is allowed
    assert await get_reply(app.store, "greet") is None


async def test_a_stray_brace_and_a_bad_name_are_refused(app: App) -> None:
    assert not (await say(app, "/replies save greet 안녕하세요 {player님")).reply.ok
    assert not (await say(app, "/replies save Greet! 안녕하세요")).reply.ok
    assert await get_reply(app.store, "greet") is None


async def test_a_saved_reply_is_sent_in_the_players_language_with_its_variables_filled(app: App) -> None:
    await english_player_thread(app)
    saved = await say(app, f"/replies save {DELAY} {DELAY_TEXT}")
    assert saved.reply.ok and "created" in saved.reply.text

    sent = await say(app, f"/reply {DELAY} order=ORD301 coupon_code=ARCA-7K2Q", channel=WEB_THREAD)

    expected = "Hi Mira, for the delay of ORD301 we sent you coupon ARCA-7K2Q."
    assert sent.reply.ok and expected in sent.reply.text
    queued = await pending_replies(app.store, "web:")
    assert [(r.thread_id, r.text, r.staff) for r in queued] == [(WEB_THREAD, expected, "지수")]
    async with app.store.session() as s:
        kept = (
            await s.execute(
                select(ThreadMessage).where(
                    ThreadMessage.thread_id == WEB_THREAD, ThreadMessage.role == "assistant"
                )
            )
        ).scalar_one()
    assert kept.content == expected  # the bot reads it in the conversation's history
    used = await audit_actions(app.store, "reply.used")
    assert [(u.target, u.thread_id, u.code) for u in used] == [(DELAY, WEB_THREAD, "OK")]


async def test_a_korean_player_gets_the_korean_text(app: App) -> None:
    await say(app, f"/replies save {DELAY} {DELAY_TEXT}")
    thread = "web:v-luna:main"
    await app.conversations.memory.append(thread, {"role": "user", "content": "쿠폰 언제 와요?"})

    sent = await say(app, f"/reply {DELAY} player=루나 order=ORD001 coupon_code=AB12", channel=thread)

    assert "루나님, ORD001 주문 지연 보상으로 쿠폰 AB12을(를) 드렸습니다." in sent.reply.text


async def test_a_missing_value_is_refused_with_the_line_to_type_and_nothing_is_sent(app: App) -> None:
    await english_player_thread(app)
    await say(app, f"/replies save {DELAY} {DELAY_TEXT}")

    sent = await say(app, f"/reply {DELAY} order=ORD301", channel=WEB_THREAD)

    assert not sent.reply.ok
    assert "{coupon_code}" in sent.reply.text and f"/reply {DELAY} coupon_code=" in sent.reply.text
    assert await pending_replies(app.store, "web:") == []
    assert await audit_actions(app.store, "reply.used") == []


async def test_a_value_for_an_unknown_variable_is_refused(app: App) -> None:
    await say(app, "/replies save thanks 감사합니다 {player}님")
    sent = await say(app, "/reply thanks nickname=루나", channel="web:v-luna:main")
    assert not sent.reply.ok and "name=value" in sent.reply.text


async def test_reply_without_a_name_lists_the_saved_replies(app: App) -> None:
    await say(app, f"/replies save {DELAY} {DELAY_TEXT}")
    await say(app, "/replies save thanks Thank you for waiting, {player}.")

    listed = await say(app, "/reply")

    assert listed.reply.ok and listed.reply.data["names"] == [DELAY, "thanks"]
    assert "[ko+en]" in listed.reply.text and "[en]" in listed.reply.text


async def test_a_reply_is_edited_then_deleted_and_both_are_audited(app: App) -> None:
    await say(app, "/replies save thanks 기다려 주셔서 감사합니다.")
    edited = await say(
        app, "/replies save thanks 기다려 주셔서 정말 감사합니다. || Thanks a lot for waiting."
    )
    assert edited.reply.ok and "updated" in edited.reply.text
    assert (await get_reply(app.store, "thanks")).text_en == "Thanks a lot for waiting."

    assert (await say(app, "/replies delete thanks")).reply.ok
    assert await get_reply(app.store, "thanks") is None
    assert not (await say(app, "/reply thanks")).reply.ok
    assert [a.code for a in await audit_actions(app.store, "reply.saved")] == ["CREATED", "UPDATED"]
    assert len(await audit_actions(app.store, "reply.deleted")) == 1


async def test_in_the_console_the_reply_is_printed_not_queued(app: App) -> None:
    await say(app, "/replies save thanks 기다려 주셔서 감사합니다, {staff} 드림.")
    sent = await say(app, "/reply thanks")
    assert sent.reply.ok and "기다려 주셔서 감사합니다, 지수 드림." in sent.reply.text
    assert await pending_replies(app.store, "console:") == []


async def test_non_staff_cannot_save_or_send(app: App) -> None:
    await say(app, "/replies save thanks 감사합니다.")
    assert (await say(app, "/reply thanks", staff=False)).reply.denied
    assert (await say(app, "/replies save evil 나쁜 답변", staff=False)).reply.denied
    assert await get_reply(app.store, "evil") is None
