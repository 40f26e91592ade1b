"""Failures at the Discord edge: rate limits and server errors on edits still end with the final answer
visible, and a restarted bot continues a channel's conversation from the database."""

from __future__ import annotations

import pytest

from bot.llm.scripted import ScriptedLLM
from tests.fakes.openai_server import FakeOpenAIServer, reply
from tests.support.fake_discord import FakeDiscord

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
EDIT = rf"/channels/{SUPPORT}/messages/\d+$"
LOOKUP = {"tool": "lookup_order", "args": {"order_id": "ORD001"}}
ANSWER = "ORD001 주문은 배송 지연 상태입니다. 출고되면 바로 알려 드리겠습니다."


def _final_visible(fake: FakeDiscord, text: str):
    return lambda: any(m["content"] == text for m in fake.bot_messages(SUPPORT))


@pytest.mark.slow
async def test_a_429_and_a_500_on_edits_still_end_with_the_final_answer(harness, fake):
    fake.fail("PATCH", EDIT, status=429, times=1, retry_after=0.05)
    fake.fail("PATCH", EDIT, status=500, times=1)
    bot = await harness.start(ScriptedLLM([LOOKUP, {"final": "지연"}, {"answer": ANSWER}]))

    await fake.user_says(SUPPORT, 9001, "ORD001 배송 언제 와요?")
    await fake.wait_for(_final_visible(fake, ANSWER), what="the final answer")
    await bot.idle()

    statuses = [c.status for c in fake.calls_to("PATCH", EDIT)]
    assert statuses[:2] == [429, 500] and statuses[-1] == 200
    assert [m["content"] for m in fake.bot_messages(SUPPORT)] == [ANSWER]


@pytest.mark.slow
async def test_edits_that_keep_failing_fall_back_to_a_new_message_with_the_final_answer(harness, fake):
    # 503 is not retried by discord.py: it reaches the surface as SurfaceError, and the Renderer posts
    # the final text as a new message instead of editing.
    fake.fail("PATCH", EDIT, status=503, times=4)
    bot = await harness.start(ScriptedLLM([LOOKUP, {"final": "지연"}, {"answer": ANSWER}]))

    await fake.user_says(SUPPORT, 9001, "ORD001 배송 언제 와요?")
    await fake.wait_for(_final_visible(fake, ANSWER), within=20, what="the final answer as a new message")
    await bot.idle()

    statuses = [c.status for c in fake.calls_to("PATCH", EDIT)]
    assert statuses and set(statuses) == {503}
    assert [m["content"] for m in fake.bot_messages(SUPPORT)] == [ANSWER]


async def test_a_restarted_bot_continues_the_channel_conversation(harness, fake):
    async with FakeOpenAIServer(chunk_chars=5) as llm_server:
        settings = harness.settings(
            model="fake-model", openai_base_url=llm_server.base_url, openai_api_key="sk-test"
        )
        lookup = reply(tool_calls=[{"name": "lookup_order", "arguments": {"order_id": "ORD001"}}])
        llm_server.enqueue(lookup, reply("ORD001은 배송 지연입니다."), reply("ORD001은 배송 지연 상태예요."))
        first = await harness.start(settings=settings)
        await fake.user_says(SUPPORT, 9001, "ORD001 배송 상태 알려 주세요")
        await fake.wait_for(_final_visible(fake, "ORD001은 배송 지연 상태예요."), what="the first answer")
        await first.idle()
        await first.stop()

        llm_server.enqueue(
            reply("앞서 말씀드린 ORD001 건입니다."), reply("앞서 안내한 ORD001 건은 아직 지연 중입니다.")
        )
        second = await harness.start(settings=settings)
        assert second.bot is not first.bot
        await fake.user_says(SUPPORT, 9001, "아까 그 주문 아직도 안 왔어요")
        await fake.wait_for(
            _final_visible(fake, "앞서 안내한 ORD001 건은 아직 지연 중입니다."), what="the second answer"
        )
        await second.idle()

    loop_request = llm_server.requests[3]
    assert not loop_request.get("stream")
    seen = [(m["role"], m.get("content")) for m in loop_request["messages"]]
    assert ("user", "ORD001 배송 상태 알려 주세요") in seen
    assert ("assistant", "ORD001은 배송 지연 상태예요.") in seen
    assert seen[-1] == ("user", "아까 그 주문 아직도 안 왔어요")
