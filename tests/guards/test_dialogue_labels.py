"""A dialogue label the model writes before a line the fact check withholds ("You ask:" before "Player: …")
goes with that line, and a label that ends the answer goes too, in both languages, streamed or whole; a
label that introduces a delivered sentence, or a "질문:" inside prose, stays; no blank lines are left at
the end."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.guards.fact_set import load

CASE = next(c for c in load("precision") if c.id == "date-today-plus-refund-window-ko")
ASKED = "캐시샵 아이템 환불은 구매하고 며칠 안에 해야 하나요?"
KO = replace(CASE, player=(ASKED,), results=({"policy": "refund_window"},))
EN = replace(KO, lang="en", player=("How many days do I have to refund a cash shop item?",))

ANSWER = (
    "캐시샵 아이템은 구매 후 7일 이내이고 사용하지 않은 경우 전액 환불받을 수 있습니다. "
    "실물 상품은 받은 날로부터 7일 이내에 반품을 신청할 수 있습니다. "
    "아르카 캐시 충전분은 충전 후 7일 이내이고 한 번도 쓰지 않았다면 전액 환불됩니다."
)
LIVE = (
    f"{ANSWER}\n\nYou ask:\nPlayer: {ASKED}\nPlayer: 구매하고 며칠 안에 해야 하나요?\n{ANSWER}\n\n"
    f"You ask:\nPlayer: 구매하고 며칠 안에 해야 하나요?\n{ANSWER}\n"
)
"""Seen live (2026-12-07, Qwen2.5-Coder-1.5B in JSON mode, tests/live/fact_refund_window_without_order_korean
.yaml): the synthesis stream went on after the answer with a dialogue of its own. The Player lines and the
repeats were withheld, and the answer ended "…전액 환불됩니다.\\n\\nYou ask:\\n\\nYou ask:\\n"."""

EN_ANSWER = "Unused cash-shop items can be fully refunded within 7 days of purchase."
EN_LIVE = f"{EN_ANSWER}\n\nYou ask:\nPlayer: How many days do I have?\n\nUser:\nPlayer: And top-ups?\n"


async def streamed(case, text: str, size: int) -> tuple[str, list[str]]:
    guard = case_guard(case)
    stream = guard.stream(outcomes=case.outcomes())
    released = [await stream.feed(text[i : i + size]) for i in range(0, len(text), size)]
    return await stream.finish(), released


def case_guard(case, mode: str = "enforce"):
    from bot.guards.output import OutputGuard

    return OutputGuard(locale=case.lang, facts=case.context(mode))


@pytest.mark.parametrize(("case", "text", "want"), [(KO, LIVE, ANSWER), (EN, EN_LIVE, EN_ANSWER)])
async def test_the_label_goes_with_the_model_note_it_introduced(case, text, want) -> None:
    whole = await case.check(text)
    assert whole.text == want, whole.text
    assert {d["kind"] for d in whole.facts} <= {"model_note", "echo"} and whole.facts
    for size in (1, 3, 7, 40):
        final, released = await streamed(case, text, size)
        assert final == whole.text, size
        assert "".join(released) == final[: len("".join(released))]


@pytest.mark.parametrize(
    "tail",
    ["\n\n질문:", "\n\nQ:\n", "\n\n**플레이어:**\n\n", "\nYou asked:\n", "\n\nUser:", "\n\n사용자:\n"],
)
async def test_a_label_that_ends_the_answer_goes(tail) -> None:
    text = ANSWER + tail
    assert (await KO.check(text)).text == ANSWER
    for size in (1, 5):
        assert (await streamed(KO, text, size))[0] == ANSWER


async def test_a_label_before_the_players_own_question_goes_with_the_echo() -> None:
    text = f"플레이어:\n{ASKED}\n\n{ANSWER}"
    v = await KO.check(text)
    assert v.text == ANSWER, v.text
    assert [d["kind"] for d in v.facts] == ["echo"]


@pytest.mark.parametrize(
    "text",
    [
        f"자주 묻는 질문: 환불은 언제까지 되나요? {ANSWER}",
        f"질문:\n환불 기간이 궁금하신 거죠?\n\n{ANSWER}",
        f"Q:\n환불 기간이요?\n\n{ANSWER}",
    ],
)
async def test_a_label_that_introduces_a_delivered_sentence_stays(text) -> None:
    v = await KO.check(text)
    assert v.text == text and not v.facts, (v.text, v.facts)
    for size in (1, 6):
        assert (await streamed(KO, text, size))[0] == text


async def test_observing_the_label_and_its_note_are_delivered_as_written() -> None:
    text = f"{ANSWER}\n\nYou ask:\nPlayer: 구매하고 며칠 안에 해야 하나요?\n\n질문:"
    v = await case_guard(KO, "observe").check(text, outcomes=KO.outcomes())
    assert v.text == text, v.text
    assert [d["kind"] for d in v.facts] == ["model_note"]


async def test_no_blank_lines_are_left_where_a_withheld_sentence_was() -> None:
    text = f"Player: {ASKED}\n\n{ANSWER}\n\nPlayer: 구매하고 며칠 안에 해야 하나요?\n\n"
    assert (await KO.check(text)).text == ANSWER
