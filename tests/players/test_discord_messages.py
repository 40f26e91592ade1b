"""Player messages through the real discord.py client against the fake Discord: streaming, throttling,
splitting, interrupts, which messages are answered, mentions never pinged, escalations to staff."""

from __future__ import annotations

import itertools
from typing import Any

from bot.engine.interrupts import INTERRUPT_PREFIX
from bot.llm.scripted import ScriptedLLM
from tests.fakes.held import Held
from tests.support.answers import long_answer
from tests.support.discord import EDIT_INTERVAL, SlowStreamLLM
from tests.support.fake_discord import FakeDiscord

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
GENERAL = FakeDiscord.GENERAL_CHANNEL
STAFF = FakeDiscord.STAFF_CHANNEL
THREAD = FakeDiscord.SUPPORT_THREAD
DM_CHANNEL = 830_000_000_000_009_001

ANSWER = long_answer(
    "ORD001 주문(한정판 굿즈 세트)은 현재 배송 지연 상태입니다. 물류 센터에서 출고가 늦어지고 있어요. "
    "출고되면 이 채널에서 다시 알려 드리겠습니다.",
    11,
)


def _answered(fake: FakeDiscord, channel: int, text: str) -> Any:
    return lambda: any(m["content"] == text for m in fake.bot_messages(channel))


def _loop_texts(llm: ScriptedLLM) -> list[str]:
    """Every user-message text the model received in loop calls."""
    return [
        m["content"]
        for r in llm.requests
        if r.purpose == "loop"
        for m in r.messages
        if m["role"] == "user" and isinstance(m.get("content"), str)
    ]


async def test_player_message_gets_status_then_streamed_edits_then_the_synthesis(harness, fake):
    llm = SlowStreamLLM(
        [
            {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
            {"final": "배송 지연"},
            {"answer": ANSWER},
        ],
        delay=0.02,
    )
    bot = await harness.start(llm)

    await fake.user_says(SUPPORT, 9001, "ORD001 배송이 너무 늦어요")
    await fake.wait_for(_answered(fake, SUPPORT, ANSWER), what="the final answer")
    await bot.idle()

    [message] = fake.bot_messages(SUPPORT)
    first_post = fake.calls_to("POST", rf"/channels/{SUPPORT}/messages$")[0]
    assert first_post.body["content"].startswith("⏳")
    edits = [c.body["content"] for c in fake.calls_to("PATCH", rf"/messages/{message['id']}$")]
    streamed = [e for e in edits if not e.startswith("⏳") and e != ANSWER]
    assert len(streamed) >= 2, edits
    assert all(ANSWER.startswith(e) for e in streamed), "streamed edits are prefixes of the answer"
    assert edits[-1] == ANSWER
    assert fake.calls_to("POST", rf"/channels/{SUPPORT}/typing"), "typing is shown while the tool runs"


async def test_edits_of_one_message_are_at_least_edit_interval_apart(harness, fake):
    # The answer states ORD001's status: the order is named and looked up first (issue 50: the example
    # "e.g. ORD001" in a fixed text no longer backs an order nobody named).
    llm = SlowStreamLLM(
        [{"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "안내"}, {"answer": ANSWER}],
        delay=0.02,
    )
    bot = await harness.start(llm)

    await fake.user_says(SUPPORT, 9001, "ORD001 배송 언제 와요?")
    await fake.wait_for(_answered(fake, SUPPORT, ANSWER), what="the final answer")
    await bot.idle()

    [message] = fake.bot_messages(SUPPORT)
    times = message["edits"]
    assert len(times) >= 3
    gaps = [b - a for a, b in itertools.pairwise(times)]
    # The Renderer waits for the previous edit's response before timing the next, so arrivals at the
    # server are at least the interval apart (a little slack for the two clocks' reads).
    assert min(gaps) >= EDIT_INTERVAL - 0.01, gaps


async def test_a_3000_character_answer_arrives_as_two_messages(harness, fake):
    lines = [
        f"{i:02d}번 안내: 아르카 온라인 고객센터에서 주문과 쿠폰 문의를 도와드립니다. 잠시만 기다려 주세요."
        for i in range(60)
    ]
    long_answer = "\n".join(lines)
    assert 2900 < len(long_answer) < 4000
    llm = ScriptedLLM([{"final": "안내"}, {"answer": long_answer}])
    bot = await harness.start(llm)

    await fake.user_says(SUPPORT, 9001, "안내 전부 보여 주세요")
    await fake.wait_for(
        lambda: (
            len(fake.bot_messages(SUPPORT)) == 2
            and not fake.bot_messages(SUPPORT)[1]["content"].startswith("…")
        ),
        what="two messages",
    )
    await bot.idle()

    parts = [m["content"] for m in fake.bot_messages(SUPPORT)]
    assert len(parts) == 2
    assert all(len(p) <= 2000 for p in parts)
    assert "\n".join(parts) == long_answer


async def test_message_during_a_run_gets_eyes_and_reaches_the_model_as_an_interrupt(harness, fake):
    llm = Held(
        ScriptedLLM(
            [
                {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
                {"final": "확인했습니다"},
                {"answer": "확인했습니다."},
            ]
        )
    )
    bot = await harness.start(llm.llm)

    await fake.user_says(SUPPORT, 9001, "ORD001 어디쯤 왔나요?")
    await fake.wait_for(llm.holding.is_set, what="the run to start")
    second = await fake.user_says(SUPPORT, 9001, "참고로 선물용이에요")
    await fake.wait_for(lambda: fake.reactions_on(second), what="the 👀 reaction")
    llm.release()
    await fake.wait_for(_answered(fake, SUPPORT, "확인했습니다."), what="the answer")
    await bot.idle()

    assert fake.reactions_on(second) == ["👀"]
    assert f"{INTERRUPT_PREFIX} 참고로 선물용이에요" in _loop_texts(llm.script)
    assert len(fake.bot_messages(SUPPORT)) == 1, "the interrupt joined the run instead of starting another"


async def test_mentions_in_answers_never_ping(harness, fake):
    answer = "@everyone 공지는 <@9002> 님과 <@&820000000000000001> 역할에게도 전달되었습니다. @here"
    llm = ScriptedLLM([{"final": "전달"}, {"answer": answer}])
    bot = await harness.start(llm)

    await fake.user_says(SUPPORT, 9001, "@everyone 이거 다들 보세요 <@9002>")
    await fake.wait_for(
        lambda: fake.bot_messages(SUPPORT) and not fake.bot_messages(SUPPORT)[0]["content"].startswith("⏳"),
        what="the answer",
    )
    await bot.idle()

    writes = [
        c
        for c in fake.calls
        if c.method in ("POST", "PATCH") and isinstance(c.body, dict) and "content" in c.body
    ]
    assert writes
    for call in writes:
        assert call.body.get("allowed_mentions", {}).get("parse") == [], (call.method, call.path, call.body)


async def test_dms_are_ignored_unless_enabled(harness, fake):
    llm = ScriptedLLM([{"final": "네"}, {"answer": "채널 답변입니다."}])
    bot = await harness.start(llm)

    await fake.user_says(DM_CHANNEL, 9001, "DM으로 물어봐요", dm=True)
    await fake.user_says(SUPPORT, 9001, "채널에서 물어봐요")
    await fake.wait_for(_answered(fake, SUPPORT, "채널 답변입니다."), what="the channel answer")
    await bot.idle()

    assert not fake.calls_to("POST", rf"/channels/{DM_CHANNEL}/")
    assert "DM으로 물어봐요" not in _loop_texts(llm)


async def test_dms_are_answered_when_enabled(harness, fake):
    llm = ScriptedLLM([{"final": "네"}, {"answer": "DM 답변입니다."}])
    bot = await harness.start(llm, settings=harness.settings(allow_dms=True))

    await fake.user_says(DM_CHANNEL, 9001, "DM으로 물어봐요", dm=True)
    await fake.wait_for(_answered(fake, DM_CHANNEL, "DM 답변입니다."), what="the DM answer")
    await bot.idle()

    assert await bot.conversations.memory.recent("dm:9001")


async def test_other_bots_are_ignored(harness, fake):
    llm = ScriptedLLM([{"final": "네"}, {"answer": "사람에게 답했습니다."}])
    bot = await harness.start(llm)

    await fake.user_says(SUPPORT, 5555, "나는 다른 봇이야, 쿠폰 줘")
    await fake.user_says(SUPPORT, 9001, "사람이 묻습니다")
    await fake.wait_for(_answered(fake, SUPPORT, "사람에게 답했습니다."), what="the answer")
    await bot.idle()

    texts = _loop_texts(llm)
    assert "사람이 묻습니다" in texts
    assert not any("다른 봇" in t for t in texts)
    assert llm.calls["synthesis"] == 1


async def test_outside_support_channels_only_mentions_are_answered_without_the_mention(harness, fake):
    lookup = {"tool": "lookup_order", "args": {"order_id": "ORD001"}}
    llm = ScriptedLLM([lookup, {"final": "네"}, {"answer": "멘션에 답했습니다."}])
    bot = await harness.start(llm)

    await fake.user_says(GENERAL, 9001, "그냥 잡담")
    await fake.user_says(GENERAL, 9001, "ORD001 확인해 주세요", mention_bot=True)
    await fake.wait_for(_answered(fake, GENERAL, "멘션에 답했습니다."), what="the answer")
    await bot.idle()

    texts = _loop_texts(llm)
    assert "ORD001 확인해 주세요" in texts
    assert "그냥 잡담" not in texts
    assert not any(str(FakeDiscord.BOT_ID) in t for t in texts)
    rows = await bot.conversations.memory.recent(f"discord:{GENERAL}")
    assert [r.content for r in rows if r.role == "user"] == ["ORD001 확인해 주세요"]


async def test_a_thread_under_a_support_channel_is_its_own_conversation(harness, fake):
    llm = ScriptedLLM([{"final": "네"}, {"answer": "스레드에서 답했습니다."}])
    bot = await harness.start(llm)

    await fake.user_says(THREAD, 9001, "스레드에서 질문합니다")
    await fake.wait_for(_answered(fake, THREAD, "스레드에서 답했습니다."), what="the answer in the thread")
    await bot.idle()

    assert await bot.conversations.memory.recent(f"discord:{THREAD}")
    assert not await bot.conversations.memory.recent(f"discord:{SUPPORT}")


async def test_escalation_is_posted_to_the_staff_channel(harness, fake):
    summary = "ORD001 배송 지연, 보상 한도 초과 요청 — 운영진 판단 필요"
    llm = ScriptedLLM(
        [
            {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
            {"tool": "escalate_to_staff", "args": {"summary": summary}},
            {"final": "전달"},
            {"answer": "운영진에게 전달했습니다."},
        ]
    )
    bot = await harness.start(llm)

    await fake.user_says(SUPPORT, 9001, "ORD001 보상이 한도보다 더 필요해요")
    await fake.wait_for(_answered(fake, SUPPORT, "운영진에게 전달했습니다."), what="the answer")
    await bot.idle()

    [notice] = fake.bot_messages(STAFF)
    assert summary in notice["content"]
    assert f"<#{SUPPORT}>" in notice["content"]
    assert notice["sent_payload"]["allowed_mentions"]["parse"] == []


async def test_closing_the_bot_stops_a_run_in_progress_and_says_so(harness, fake):
    llm = Held(ScriptedLLM([{"final": "안 나갈 답"}]))
    bot = await harness.start(llm.llm, shutdown_grace=0.1)

    await fake.user_says(SUPPORT, 9001, "ORD001 확인 부탁해요")
    await fake.wait_for(llm.holding.is_set, what="the run to start")
    await bot.stop()

    assert bot.task.done() and bot.task.exception() is None
    assert fake.bot_messages(SUPPORT)[-1]["content"].startswith("⏹")
