"""Answers stay in the player's language (issue 28): the synthesis prompt names it and speaks to the
player; a reply in the wrong language is never shown — retried once with an explicit instruction, then
replaced by a fixed text in the player's language."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.engine import ReActAgent
from bot.llm import LLMError
from bot.llm.function import FunctionLLM, ModelRequest
from bot.vocabulary.language import reply_language
from tests.support.context import make_ctx

ENGLISH = "The order status is not specified in the message, please check again."
KOREAN = "ORD101 주문은 현재 배송 지연 상태예요. 출고되면 바로 알려 드릴게요."


def answering(*replies: str, chunk: int = 4) -> tuple[FunctionLLM, list[ModelRequest]]:
    """A model whose loop answers at once and whose synthesis streams `replies` in turn, in chunks."""
    queue = list(replies)
    seen: list[ModelRequest] = []

    def chat(request: ModelRequest) -> str:
        return "draft"

    async def stream(request: ModelRequest) -> AsyncIterator[str]:
        seen.append(request)
        if not queue:
            raise LLMError("no synthesis left")
        text = queue.pop(0)
        for i in range(0, len(text), chunk):
            yield text[i : i + chunk]

    return FunctionLLM(chat, stream_function=stream, abilities={"tool_call": True}), seen


async def answer_of(llm: FunctionLLM, query: str, tools) -> str:  # type: ignore[no-untyped-def]
    agent = ReActAgent(llm, tools)
    locale = "ko" if reply_language(query, min_letters=0) == "ko" else "en"
    result = await agent.run(query, make_ctx(locale=locale))
    return "".join([d async for d in agent.stream_answer(result)])


async def test_an_english_answer_to_a_korean_player_is_not_shown_and_is_asked_for_again_in_korean(tools):
    llm, seen = answering(ENGLISH, KOREAN)
    answer = await answer_of(llm, "ORD101 주문 지금 어떤 상태예요?", tools)
    assert answer == KOREAN
    assert len(seen) == 2
    retry = seen[1].messages[-1]["content"]
    assert "not in Korean" in retry and "한국어로만 답하세요" in retry


async def test_a_second_wrong_language_answer_becomes_the_fixed_text_in_the_players_language(tools):
    llm, _ = answering(ENGLISH, ENGLISH)
    answer = await answer_of(llm, "ORD101 주문 지금 어떤 상태예요?", tools)
    assert "order status" not in answer
    assert reply_language(answer) == "ko" and "운영진" in answer


async def test_a_retry_that_repeats_the_instruction_is_replaced_by_the_fixed_text(tools):
    # Seen live (Qwen2.5-Coder-1.5B): the retry answered with the instruction it was given.
    llm, seen = answering(ENGLISH, "저의 이전 대답은 한국어가 아닙니다. 다시 한 번 Korean으로 답하세요.")
    answer = await answer_of(llm, "쿠폰은 하루에 몇 장까지 받을 수 있어요?", tools)
    assert len(seen) == 2
    assert "이전 대답" not in answer and "Korean" not in answer
    assert reply_language(answer) == "ko" and "운영진" in answer


async def test_a_korean_answer_to_an_english_player_is_replaced_too(tools):
    llm, _ = answering(KOREAN, KOREAN)
    answer = await answer_of(llm, "What is the status of my order ORD101?", tools)
    assert reply_language(answer) == "en" and "staff" in answer


@pytest.mark.parametrize(
    ("query", "reply"),
    [
        ("How many coupons a day?", "You can get up to 3 coupons a day [보상 정책 §2 발급 한도]."),
        ("What about ORD301?", "Your order ORD301 (Founder pack) is Delayed (delayed, 배송 지연)."),
        ("ORD101 상태?", KOREAN),
        ("쿠폰 한도가 어떻게 되나요?", "**20,000원**까지예요 (max 20,000 KRW per coupon)."),
    ],
)
async def test_answers_in_the_right_language_with_quoted_labels_stream_through_untouched(tools, query, reply):
    llm, seen = answering(reply)
    assert await answer_of(llm, query, tools) == reply
    assert len(seen) == 1


async def test_the_synthesis_prompt_names_the_language_and_speaks_to_the_player(tools):
    llm, seen = answering(KOREAN)
    await answer_of(llm, "ORD101 상태 알려 주세요", tools)
    system, user = seen[0].messages[0]["content"], seen[0].messages[-1]["content"]
    assert "Reply in Korean" in system and user.endswith("in Korean.")
    assert "Speak to the player directly" in system and "요청하세요" in system


async def test_a_loop_answer_in_the_wrong_language_is_not_the_fallback(tools):
    llm, _ = answering()  # synthesis fails: the loop's answer would be used
    llm.function = lambda request: ENGLISH
    answer = await answer_of(llm, "ORD101 주문 지금 어떤 상태예요?", tools)
    assert ENGLISH not in answer and reply_language(answer) == "ko"


async def test_a_message_of_ids_only_holds_the_answer_to_no_language(tools):
    llm, seen = answering(KOREAN)
    assert await answer_of(llm, "ORD101?", tools) == KOREAN
    assert len(seen) == 1


def test_markup_and_code_in_a_korean_answer_do_not_make_it_english() -> None:
    from bot.vocabulary.language import reply_language

    assert reply_language("<b>굵게</b> <img src=x onerror=window.pwned=2> 답변입니다.", min_letters=0) == "ko"
    assert reply_language("`/coupon list P100` 명령으로 확인하세요.", min_letters=0) == "ko"
    assert reply_language("Your order is on its way, it should arrive soon.", min_letters=0) == "en"


@pytest.mark.parametrize("chunk", [1, 4, 200])
async def test_an_answer_streamed_as_a_json_action_shows_only_its_answer_text(tools, chunk):
    """Seen live (2026-12-03, Qwen2.5-Coder-1.5B, JSON mode): the streamed answer was the action itself,
    `{"action": "final_answer", "answer": "you have 7 days …"}`, delivered raw to the player."""
    text = "You have 7 days to get a refund for an unused cash shop item."
    for reply in (
        f'{{"action": "final_answer", "answer": "{text}"}}',
        f'  ```json\n{{"action": "final_answer", "answer": "{text}", "reasoning": "policy §1"}}\n```',
    ):
        llm, seen = answering(reply, chunk=chunk)
        assert await answer_of(llm, "How many days do I have to get a refund?", tools) == text
        assert len(seen) == 1


async def test_an_answer_streamed_as_a_tool_call_or_broken_json_leaves_the_loops_answer(tools):
    for reply in (
        '{"action": "tool_call", "tool": "search_policy", "args": {"query": "환불"}}',
        '{"answer": ',
    ):
        llm, _ = answering(reply)
        assert await answer_of(llm, "How many days do I have to get a refund?", tools) == "draft"


@pytest.mark.parametrize("reply", ["`ORD101` is delayed.", "``", "Refunds take 7 days {or less}."])
async def test_answers_that_only_contain_marks_of_code_stream_as_they_are(tools, reply):
    llm, _ = answering(reply, chunk=1)
    assert await answer_of(llm, "What about my refund?", tools) == reply
