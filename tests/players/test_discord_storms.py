"""Discord 5xx/429 storms on message sends and edits (the fake Discord on loopback, the real discord.py
client): the whole final answer still lands, and no message is posted twice. An edit outage that never
ends is played against the Renderer itself on a virtual clock (no real waiting).
"""

from __future__ import annotations

import re

import pytest

from bot.conversations.renderer import Renderer, split_message
from tests.support.clock import FakeClock
from tests.support.discord import SlowStreamLLM
from tests.support.fake_discord import FakeDiscord
from tests.support.surface import RecordingSurface

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
EDIT = rf"/channels/{SUPPORT}/messages/\d+$"
SEND = rf"/channels/{SUPPORT}/messages$"
LONG_ANSWER = "\n".join(
    f"{i}. ORD001 배송 안내 {i}번째 문장입니다. 물류 센터에서 주문을 순서대로 처리하고 있으며 출고되면 알려 드립니다."
    for i in range(1, 71)
)
"""About 4,700 characters: three Discord messages."""
LOOKUP = {"tool": "lookup_order", "args": {"order_id": "ORD001"}}
"""The question names ORD001: the engine wants its lookup before an answer (issue 28)."""


def _visible(fake: FakeDiscord) -> list[str]:
    return [m["content"] for m in fake.bot_messages(SUPPORT)]


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


async def _ask(fake: FakeDiscord, bot, question: str = "ORD001 배송 안내 자세히 해 주세요") -> list[str]:
    await fake.user_says(SUPPORT, 9001, question)
    want = split_message(LONG_ANSWER)
    await fake.wait_for(lambda: _visible(fake)[-len(want) :] == want, within=60, what="the final answer")
    await bot.idle(within=60)
    return _visible(fake)


def _assert_answer_landed_once(shown: list[str]) -> None:
    want = split_message(LONG_ANSWER)
    assert len(want) == 3
    assert shown == want, [s[:40] for s in shown]
    assert _words(" ".join(shown)) == _words(LONG_ANSWER)


@pytest.mark.slow
async def test_a_storm_of_5xx_and_429_on_edits_still_lands_the_whole_answer_once(harness, fake):
    bot = await harness.start(
        SlowStreamLLM([LOOKUP, {"final": "안내"}, {"answer": LONG_ANSWER}], chunk_size=40, delay=0.005)
    )
    # discord.py retries 500/502 itself (1 s, 3 s, … apart) and 429 after `retry_after`; 503 reaches the
    # Renderer, which sends the part anew. Kept to a few of the slow kinds so the test stays quick.
    for status, times in ((500, 1), (429, 3), (503, 2), (502, 1), (429, 2)):
        fake.fail("PATCH", EDIT, status=status, times=times, retry_after=0.05)
    _assert_answer_landed_once(await _ask(fake, bot))
    statuses = {c.status for c in fake.calls_to("PATCH", EDIT)}
    assert {429, 500, 502, 503} <= statuses


@pytest.mark.slow
async def test_a_storm_on_sends_never_posts_a_message_twice(harness, fake):
    bot = await harness.start(
        SlowStreamLLM([LOOKUP, {"final": "안내"}, {"answer": LONG_ANSWER}], chunk_size=40, delay=0.005)
    )
    for status, times in ((500, 1), (429, 2), (503, 1), (502, 1), (429, 1)):
        fake.fail("POST", SEND, status=status, times=times, retry_after=0.05)
    _assert_answer_landed_once(await _ask(fake, bot))
    failed_sends = [c for c in fake.calls_to("POST", SEND) if c.status != 200]
    assert len(failed_sends) == 6


async def test_edits_that_fail_for_good_still_show_every_part_of_the_final_answer_exactly_once():
    surface = RecordingSurface(fail_all_edits=True)
    clock = FakeClock()
    renderer = Renderer(surface, edit_interval=1.0, clock=clock, sleep=clock.sleep)
    await renderer.status("⏳ 확인 중…")
    for start in range(0, len(LONG_ANSWER), 40):
        await renderer.append(LONG_ANSWER[start : start + 40])
        clock.advance(0.05)  # the model streams 40 characters every 50 ms
    await renderer.finish(LONG_ANSWER)
    for part in split_message(LONG_ANSWER):
        assert list(surface.messages.values()).count(part) == 1, part[:40]


async def test_an_edit_outage_holds_the_answer_back_by_at_most_a_minute():
    # A failing edit holds the renderer's lock; the answer must not wait for one such failure per
    # streamed delta (virtual time here).
    surface = RecordingSurface(fail_all_edits=True)
    clock = FakeClock()
    renderer = Renderer(surface, edit_interval=1.0, clock=clock, sleep=clock.sleep)
    for start in range(0, len(LONG_ANSWER), 40):
        await renderer.append(LONG_ANSWER[start : start + 40])
    await renderer.finish(LONG_ANSWER)
    assert clock.now < 120, (
        f"the final answer appeared after {clock.now:.0f} s of retries ({surface.edit_attempts} edits)"
    )
