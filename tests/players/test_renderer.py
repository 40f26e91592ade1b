from __future__ import annotations

import asyncio
import itertools

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bot.conversations.renderer import Renderer, split_message
from tests.support.clock import FakeClock
from tests.support.surface import RecordingSurface


def _renderer(surface: RecordingSurface, clock: FakeClock, interval: float = 1.0) -> Renderer:
    return Renderer(surface, edit_interval=interval, clock=clock, sleep=clock.sleep)


async def test_status_line_then_answer_in_the_same_message() -> None:
    clock = FakeClock()
    surface = RecordingSurface(clock=clock)
    r = _renderer(surface, clock)
    await r.status("⏳ 주문 정보를 확인하고 있어요")
    for word in ["ORD001은 ", "배송 지연 ", "상태입니다."]:
        await r.append(word)
        clock.now += 0.3
    await r.finish()
    assert list(surface.messages.values()) == ["ORD001은 배송 지연 상태입니다."]
    assert surface.sends[0][2] == "⏳ 주문 정보를 확인하고 있어요"


async def test_edits_per_message_never_exceed_one_per_interval() -> None:
    clock = FakeClock()
    surface = RecordingSurface(clock=clock)
    r = _renderer(surface, clock, interval=1.0)
    await r.status("⏳")
    for i in range(200):
        await r.append(f"토큰{i} ")
        clock.now += 0.05
        await asyncio.sleep(0)
    await r.finish()
    per_message: dict[int, list[float]] = {}
    for at, handle, _ in surface.edits:
        per_message.setdefault(handle, []).append(at)
    for times in per_message.values():
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert all(g >= 1.0 - 1e-9 for g in gaps), gaps
    assert "".join(surface.messages.values()).replace(" ", "") == "".join(f"토큰{i}" for i in range(200))


async def test_long_answer_continues_in_a_new_message() -> None:
    clock = FakeClock()
    surface = RecordingSurface(clock=clock)
    r = _renderer(surface, clock)
    text = "\n".join(f"{i:03d}번 줄: 아르카 온라인 보상 정책 안내 문장입니다." for i in range(100))
    assert 2000 < len(text) < 4000
    for i in range(0, len(text), 50):
        await r.append(text[i : i + 50])
        clock.now += 0.1
    await r.finish()
    shown = list(surface.messages.values())
    assert len(shown) == 2
    assert all(len(m) <= 2000 for m in shown)
    assert "\n".join(shown) == text


async def test_final_text_lands_even_when_edits_fail() -> None:
    clock = FakeClock()
    surface = RecordingSurface(clock=clock, fail_edits=2)
    r = _renderer(surface, clock)
    await r.status("⏳")
    await r.append("안녕하세요")
    await r.finish("안녕하세요, 무엇을 도와드릴까요?")
    assert list(surface.messages.values())[-1] == "안녕하세요, 무엇을 도와드릴까요?"


async def test_final_text_is_sent_as_a_new_message_when_every_edit_fails() -> None:
    clock = FakeClock()
    surface = RecordingSurface(clock=clock, fail_all_edits=True)
    r = _renderer(surface, clock)
    await r.status("⏳ 확인 중…")
    await r.finish("최종 답변입니다.")
    assert list(surface.messages.values()) == ["⏳ 확인 중…", "최종 답변입니다."]


async def test_finish_with_a_corrected_text_replaces_what_was_streamed() -> None:
    clock = FakeClock()
    surface = RecordingSurface(clock=clock, max_chars=100)
    r = _renderer(surface, clock)
    await r.append("가" * 90 + " " + "나" * 90 + " 쿠폰을 발급했습니다.")
    await r.finish("가" * 90 + " 쿠폰은 발급되지 않았습니다.")
    assert "발급했습니다" not in "".join(surface.messages.values())


def test_split_never_cuts_inside_a_code_block_when_a_boundary_exists() -> None:
    text = "설명 " * 300 + "\n```python\nprint('아르카')\nprint('온라인')\n```\n" + "끝 " * 50
    chunks = split_message(text, 2000)
    for chunk in chunks:
        assert chunk.count("```") % 2 == 0
        assert len(chunk) <= 2000


def test_a_code_block_longer_than_the_limit_is_closed_and_reopened() -> None:
    code = "```\n" + "\n".join(f"line {i}" for i in range(400)) + "\n```"
    chunks = split_message(code, 500)
    assert len(chunks) > 1
    assert all(c.count("```") % 2 == 0 and len(c) <= 500 for c in chunks)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("가나다 abc\n`")), max_size=3000), st.integers(16, 300))
@example(text="```````````a````a", limit=16)  # a cut inside a code block: the fence closes on a new line
def test_split_respects_the_limit_and_loses_no_text(text: str, limit: int) -> None:
    """Every character but whitespace and fences survives, once and in order. (Words may not: a run
    with no boundary longer than the room left is cut, and inside a code block the cut closes the fence
    on a new line.)"""
    chunks = split_message(text, limit)
    assert all(len(c) <= limit for c in chunks)
    visible = lambda s: "".join(s.replace("`", "").split())  # noqa: E731
    assert visible("".join(chunks)) == visible(text)


def test_split_keeps_the_words_of_prose() -> None:
    text = " ".join(f"단어{i}" for i in range(400))
    chunks = split_message(text, 100)
    assert all(len(c) <= 100 for c in chunks)
    assert " ".join(chunks).split() == text.split()


@pytest.mark.parametrize("interval", [0.0, 0.5])
async def test_every_delta_reaches_the_final_message(interval: float) -> None:
    clock = FakeClock()
    surface = RecordingSurface(clock=clock)
    r = _renderer(surface, clock, interval)
    for ch in "쿠폰 정책은 1회 20,000원까지입니다.":
        await r.append(ch)
    await r.finish()
    assert list(surface.messages.values()) == ["쿠폰 정책은 1회 20,000원까지입니다."]
