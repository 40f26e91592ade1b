"""Persistent buttons against the loopback Discord with the real discord.py client:
Approve / Reject on an approval request (staff only, exactly once, after a restart), Take over /
Hand back on an escalation card, and 👍 / 👎 with the comment modal on an answer."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import select

from bot.llm.scripted import ScriptedLLM
from bot.store import AuditEntry, Coupon, Feedback
from tests.support.fake_discord import EPHEMERAL, FakeDiscord, FakeUser
from tools.base import Actor
from tools.ledger import issue_for_player

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
STAFF = FakeDiscord.STAFF_CHANNEL
PLAYER_THREAD = f"discord:{SUPPORT}"
LUNA = Actor(discord_id="9001", player_id="P100", display_name="루나")


async def request_approval(running: Any, fake: FakeDiscord) -> dict[str, Any]:
    """A player's 5,000원 coupon above a 1,000원 threshold: pending, and the request posted to staff."""
    conv = running.conversations
    rules = conv.services.coupon_rules.model_copy(update={"approval_threshold": 1000})
    result = await issue_for_player(
        conv.store,
        rules,
        actor=LUNA,
        order_id="ORD001",
        amount=5000,
        reason="배송 지연",
        idempotency_key="t:approval",
        thread_id=PLAYER_THREAD,
        notify=conv.services.notify_staff,
    )
    assert result.code == "PENDING_APPROVAL", result
    await fake.wait_for(lambda: _approval_posts(fake), what="the approval request")
    [post] = _approval_posts(fake)
    return post


def _approval_posts(fake: FakeDiscord) -> list[dict[str, Any]]:
    return [m for m in fake.bot_messages(STAFF) if "Coupon approval" in m["content"]]


async def coupon_status(running: Any) -> list[str]:
    async with running.conversations.store.session() as s:
        return list((await s.execute(select(Coupon.status).where(Coupon.order_id == "ORD001"))).scalars())


async def audit_rows(running: Any, action: str) -> list[AuditEntry]:
    async with running.conversations.store.session() as s:
        return list((await s.execute(select(AuditEntry).where(AuditEntry.action == action))).scalars())


def _callback_done(fake: FakeDiscord, token: str) -> Any:
    return lambda: (
        fake.interactions[token]["callback"] is not None
        and (fake.interactions[token]["callback"].get("type") != 6 or fake.interactions[token]["followups"])
    )


async def test_the_approval_request_carries_approve_and_reject(harness, fake):
    running = await harness.start(ScriptedLLM([]))
    post = await request_approval(running, fake)
    assert fake.buttons(int(post["id"])) == [
        f"arca:ap:ok:ORD001:{PLAYER_THREAD}",
        f"arca:ap:no:ORD001:{PLAYER_THREAD}",
    ]


async def test_two_racing_approve_presses_issue_exactly_one_coupon(harness, fake, db_url):
    # On SQLite and (under the `postgres` marker) on PostgreSQL, where the ledger's row lock decides.
    fake.add_user(FakeUser(43, "staffer2", roles=[FakeDiscord.STAFF_ROLE]))
    running = await harness.start(ScriptedLLM([]), settings=harness.settings(db_url=db_url))
    post = await request_approval(running, fake)
    mid = int(post["id"])
    button = f"arca:ap:ok:ORD001:{PLAYER_THREAD}"
    t1, t2 = await asyncio.gather(fake.press(42, mid, button), fake.press(43, mid, button))
    for token in (t1, t2):
        await fake.wait_for(_callback_done(fake, token), what="the press was answered")
    await running.idle()

    assert await coupon_status(running) == ["active"]
    approvals = await audit_rows(running, "coupon.approve")
    assert sorted(r.code for r in approvals) == ["ALREADY_ISSUED", "OK"], (
        "one transition; the other press is told it was already approved"
    )
    assert all(r.thread_id == PLAYER_THREAD for r in approvals)
    edited = fake.messages[mid]
    assert "✅ 승인됨 / Approved" in edited["content"] and edited["components"] == []
    assert "<@42>" in edited["content"] or "<@43>" in edited["content"]
    told = [m["content"] for m in fake.bot_messages(SUPPORT)]
    assert len([t for t in told if "쿠폰을 승인했습니다" in t]) == 1, told
    followups = [f["content"] for tok in (t1, t2) for f in fake.interactions[tok]["followups"]]
    assert any(f.startswith("[OK]") for f in followups)
    [lost] = [f for f in followups if not f.startswith("[OK]")]
    assert (
        "쿠폰은 이미 " in lost and "승인했습니다" in lost and "승인 대기 중인 쿠폰이 없습니다" not in lost
    ), lost


async def test_a_player_press_is_refused_ephemerally_and_audited(harness, fake):
    running = await harness.start(ScriptedLLM([]))
    post = await request_approval(running, fake)
    token = await fake.press(9001, int(post["id"]), f"arca:ap:ok:ORD001:{PLAYER_THREAD}")
    await fake.wait_for(lambda: fake.interactions[token]["callback"] is not None, what="the refusal")
    [(text, flags)] = fake.interaction_texts(token)
    assert text.startswith("⛔") and flags & EPHEMERAL
    assert await coupon_status(running) == ["pending"]
    denied = await audit_rows(running, "staff.denied")
    assert [(r.actor, r.target, r.code) for r in denied] == [("player:P100", "/coupon approve", "DENIED")]


async def test_reject_works_after_a_restart_and_tells_the_player(harness, fake):
    first = await harness.start(ScriptedLLM([]))
    post = await request_approval(first, fake)
    await first.stop()
    second = await harness.start(ScriptedLLM([]))  # a new process: the button lives only in its custom_id
    mid = int(post["id"])
    token = await fake.press(42, mid, f"arca:ap:no:ORD001:{PLAYER_THREAD}")
    await fake.wait_for(_callback_done(fake, token), what="the reject press")
    await fake.wait_for(lambda: "Rejected" in fake.messages[mid]["content"], what="the edited request")
    assert await coupon_status(second) == ["rejected"]
    assert fake.messages[mid]["components"] == []
    await fake.wait_for(
        lambda: any("발급되지 않았습니다" in m["content"] for m in fake.bot_messages(SUPPORT)),
        what="player told",
    )


async def test_escalation_card_takes_over_and_hands_back(harness, fake):
    running = await harness.start(ScriptedLLM([]))
    conv = running.conversations
    await conv.services.notify_staff(
        "escalation",
        {"escalation_id": 7, "thread_id": PLAYER_THREAD, "player_id": "P100", "summary": "환불 문의"},
    )
    await fake.wait_for(
        lambda: any("Escalation #7" in m["content"] for m in fake.bot_messages(STAFF)), what="card"
    )
    [card] = [m for m in fake.bot_messages(STAFF) if "Escalation #7" in m["content"]]
    mid = int(card["id"])
    assert fake.buttons(mid) == [f"arca:ho:take:{PLAYER_THREAD}", f"arca:ho:back:{PLAYER_THREAD}"]

    refused = await fake.press(9001, mid, f"arca:ho:take:{PLAYER_THREAD}")
    await fake.wait_for(lambda: fake.interactions[refused]["callback"] is not None, what="refusal")
    assert not await conv.is_paused(PLAYER_THREAD)

    took = await fake.press(42, mid, f"arca:ho:take:{PLAYER_THREAD}")
    await fake.wait_for(lambda: fake.interactions[took]["followups"], what="take over")
    assert await conv.is_paused(PLAYER_THREAD)
    # The press edits its own card (who took it, Hand back only); no second card is posted.
    assert [int(m["id"]) for m in fake.bot_messages(STAFF)] == [mid]
    assert "Escalation #7" in fake.messages[mid]["content"]
    assert "이어받음 / Taken over — <@42>" in fake.messages[mid]["content"]
    assert fake.buttons(mid) == [f"arca:ho:back:{PLAYER_THREAD}"]
    # The handoff is still recorded for every other listener (the web console's feed).
    assert [k for k, _ in conv.notifications] == ["escalation", "handoff"]
    assert conv.notifications[-1][1]["on_card"] is True, "the notice says the card shows it"
    back = await fake.press(42, mid, f"arca:ho:back:{PLAYER_THREAD}")
    await fake.wait_for(lambda: fake.interactions[back]["followups"], what="hand back")
    assert not await conv.is_paused(PLAYER_THREAD)
    assert [int(m["id"]) for m in fake.bot_messages(STAFF)] == [mid]
    assert "봇에게 넘김 / Handed back — <@42>" in fake.messages[mid]["content"]
    assert fake.buttons(mid) == [f"arca:ho:take:{PLAYER_THREAD}"]
    actions = [r.action for r in await audit_rows(running, "handoff")] + [
        r.action for r in await audit_rows(running, "resume")
    ]
    assert actions == ["handoff", "resume"]
    assert [r.target for r in await audit_rows(running, "staff.denied")] == ["/handoff"]


async def test_a_handoff_typed_as_a_command_posts_its_own_card(harness, fake):
    running = await harness.start(ScriptedLLM([]))

    token = await fake.slash(42, STAFF, "handoff", {"channel": SUPPORT})
    await fake.wait_for(lambda: fake.interaction_texts(token), what="the handoff reply")
    [card] = await fake.wait_for(
        lambda: [m for m in fake.bot_messages(STAFF) if f"discord:{SUPPORT}" in m["content"]],
        what="the handoff card",
    )

    assert fake.buttons(int(card["id"])) == [f"arca:ho:back:discord:{SUPPORT}"]
    assert "on_card" not in running.conversations.notifications[-1][1]


async def test_an_answer_gets_thumbs_and_votes_are_stored_and_changed(harness, fake):
    running = await harness.start(ScriptedLLM([{"final": "안녕하세요"}, {"answer": "무엇을 도와드릴까요?"}]))
    await fake.user_says(SUPPORT, 9001, "안녕")
    await fake.wait_for(
        lambda: any(fake.buttons(int(m["id"])) for m in fake.bot_messages(SUPPORT)), what="feedback buttons"
    )
    await running.idle()
    [answer] = [m for m in fake.bot_messages(SUPPORT) if fake.buttons(int(m["id"]))]
    assert answer["content"] == "무엇을 도와드릴까요?"
    up, down, person = fake.buttons(int(answer["id"]))
    assert person == f"arca:person:{PLAYER_THREAD}"
    assert up.startswith("arca:fb:up:") and down.startswith("arca:fb:down:")
    run_id = up.rsplit(":", 1)[1]

    async def votes() -> list[tuple[int, str | None, str]]:
        async with running.conversations.store.session() as s:
            rows = (await s.execute(select(Feedback))).scalars()
            return [(f.vote, f.comment, f.player) for f in rows]

    stranger = await fake.press(9002, int(answer["id"]), up)
    await fake.wait_for(lambda: fake.interactions[stranger]["callback"] is not None, what="stranger refused")
    assert await votes() == []

    tok = await fake.press(9001, int(answer["id"]), up)
    await fake.wait_for(lambda: fake.interactions[tok]["callback"] is not None, what="thumbs up")
    assert await votes() == [(1, None, "player:P100")]

    tok = await fake.press(9001, int(answer["id"]), down)
    await fake.wait_for(lambda: fake.interactions[tok]["callback"] is not None, what="thumbs down")
    modal = fake.interactions[tok]["callback"]
    assert modal["type"] == 9 and modal["data"]["custom_id"] == f"arca:fbm:{run_id}"
    assert await votes() == [(-1, None, "player:P100")], "the vote counts even without a comment"

    sub = await fake.submit_modal(
        9001, SUPPORT, f"arca:fbm:{run_id}", {"comment": "주문 번호를 안 물어봤어요"}
    )
    await fake.wait_for(lambda: fake.interactions[sub]["callback"] is not None, what="modal submit")
    assert await votes() == [(-1, "주문 번호를 안 물어봤어요", "player:P100")]


async def test_stats_slash_command_answers_staff_ephemerally_with_the_figures(harness, fake):
    running = await harness.start(ScriptedLLM([{"final": "안녕하세요"}, {"answer": "반갑습니다."}]))
    await fake.user_says(SUPPORT, 9001, "안녕")
    await fake.wait_for(
        lambda: any(fake.buttons(int(m["id"])) for m in fake.bot_messages(SUPPORT)), what="the answer"
    )
    await running.idle()

    token = await fake.slash(42, STAFF, "stats", {"days": 7})
    [(text, flags)] = await fake.wait_for(lambda: fake.interaction_texts(token), what="the stats reply")
    assert flags & EPHEMERAL
    assert "지원 통계 최근 7일" in text and "conversations: 1" in text
    assert "bot resolution rate: 0.0%" in text, "the only conversation is still inside its resolution window"

    refused = await fake.slash(9001, SUPPORT, "stats")
    [(text, flags)] = await fake.wait_for(lambda: fake.interaction_texts(refused), what="the refusal")
    assert flags & EPHEMERAL and text.startswith("⛔")


async def test_handoff_posts_a_card_whose_hand_back_resumes_the_bot(harness, fake):
    running = await harness.start(ScriptedLLM([]))
    conv = running.conversations
    token = await fake.slash(42, SUPPORT, "handoff")
    await fake.wait_for(lambda: fake.interaction_texts(token), what="the /handoff reply")
    assert await conv.is_paused(PLAYER_THREAD)
    await fake.wait_for(
        lambda: [m for m in fake.bot_messages(STAFF) if fake.buttons(int(m["id"]))], what="the handoff card"
    )
    [card] = [m for m in fake.bot_messages(STAFF) if fake.buttons(int(m["id"]))]
    assert "handoff" in card["content"] and "staff:42" in card["content"]
    assert fake.buttons(int(card["id"])) == [f"arca:ho:back:{PLAYER_THREAD}"]
    back = await fake.press(42, int(card["id"]), f"arca:ho:back:{PLAYER_THREAD}")
    await fake.wait_for(lambda: fake.interactions[back]["followups"], what="hand back")
    assert not await conv.is_paused(PLAYER_THREAD)
