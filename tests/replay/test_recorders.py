"""The replayed turn's recording model (`bot.replay.recorders.recording`): what the live report's
`model_replies` holds — each loop reply, and each answer streamed to the player, marked as streamed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from bot.llm.function import FunctionLLM, ModelRequest
from bot.replay.recorders import SYNTHESIS_MARK, LoopInputs, recording


def _model() -> FunctionLLM:
    async def stream(request: ModelRequest) -> AsyncIterator[str]:
        for piece in ("환불은 ", "7일 ", "이내에 ", "신청하실 수 있어요."):
            yield piece

    return FunctionLLM(lambda request: '{"action": "final", "answer": "네"}', stream_function=stream)


async def _streamed(llm: Any, purpose: str, *, take: int | None = None) -> str:
    stream = llm.stream_chat([{"role": "user", "content": "환불 기간?"}], purpose=purpose)
    got: list[str] = []
    try:
        async for piece in stream:
            got.append(piece)
            if take is not None and len(got) == take:
                break
    finally:
        await stream.aclose()
    return "".join(got)


async def test_a_streamed_answer_is_recorded_whole_and_marked_after_the_loop_replies() -> None:
    replies: list[str] = []
    inputs: LoopInputs = []
    llm = recording(_model(), inputs, lambda n: n, replies)
    await llm.chat([{"role": "user", "content": "환불 기간?"}], purpose="loop")
    assert await _streamed(llm, "synthesis") == "환불은 7일 이내에 신청하실 수 있어요."
    assert replies == [
        '{"action": "final", "answer": "네"}',
        SYNTHESIS_MARK + "환불은 7일 이내에 신청하실 수 있어요.",
    ]
    assert len(inputs) == 1  # a stream is no loop step


async def test_a_stream_cut_short_records_what_the_player_was_streamed() -> None:
    replies: list[str] = []
    llm = recording(_model(), [], lambda n: n, replies)
    assert await _streamed(llm, "synthesis", take=2) == "환불은 7일 "
    assert replies == [SYNTHESIS_MARK + "환불은 7일 "]


async def test_other_streams_and_a_recording_without_replies_record_nothing() -> None:
    replies: list[str] = []
    llm = recording(_model(), [], lambda n: n, replies)
    assert await _streamed(llm, "compact") == "환불은 7일 이내에 신청하실 수 있어요."
    assert replies == []
    quiet = recording(_model(), [], lambda n: n)
    assert await _streamed(quiet, "synthesis") == "환불은 7일 이내에 신청하실 수 있어요."
