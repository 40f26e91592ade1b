"""Phase two of a run: the player-facing answer, streamed from the model over the whole trace, with
the loop's own answer as the fallback when synthesis is skipped, fails or yields nothing."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from bot.engine.events import AnswerEvent, Emitter
from bot.engine.prompts import synthesis_messages
from bot.engine.results import NO_SYNTHESIS, AgentResult
from bot.engine.trace import format_trace
from bot.llm.base import LLM

log = logging.getLogger(__name__)


async def stream_answer(
    llm: LLM,
    result: AgentResult,
    *,
    question: str,
    result_chars: int,
    emit: Emitter,
    time_limit: float | None = None,
) -> AsyncIterator[str]:
    """Stream the answer; falls back to `result.answer` if synthesis is skipped, fails, yields nothing
    or runs past `time_limit` seconds (a small model can repeat itself until its context is full)."""
    await emit(AnswerEvent(channel="answer", status="start"))
    produced = False
    if result.stopped_reason not in NO_SYNTHESIS:
        messages = synthesis_messages(question, format_trace(result.messages, result_chars), result.answer)
        try:
            async for delta in _bounded(llm.stream_chat(messages, purpose="synthesis"), time_limit):
                if not delta:
                    continue
                produced = True
                await emit(AnswerEvent(channel="answer", status="delta", content=delta))
                yield delta
        except AssertionError:
            raise
        except Exception as exc:  # the edge: any synthesis failure falls back to the loop's answer
            log.warning("answer synthesis failed (%s: %s); using the loop's answer", type(exc).__name__, exc)
            # Text already streamed cannot be taken back here: the caller replaces it with
            # `result.answer` when this is set (see Conversations).
            result.synthesis_error = f"{type(exc).__name__}: {exc}"
    if not produced and result.answer:
        await emit(AnswerEvent(channel="answer", status="delta", content=result.answer))
        yield result.answer
    await emit(AnswerEvent(channel="answer", status="done"))


class SynthesisTimeout(TimeoutError):
    """The answer stream ran past its time limit."""


async def _bounded(stream: AsyncIterator[str], time_limit: float | None) -> AsyncIterator[str]:
    """`stream`'s deltas until `time_limit` seconds have passed (each wait bounded, so a stalled stream
    and an endless one both end); the stream is closed either way."""
    source = aiter(stream)
    try:
        if time_limit is None:
            async for delta in source:
                yield delta
            return
        deadline = asyncio.get_running_loop().time() + time_limit
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    delta = await anext(source)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise SynthesisTimeout(f"the answer took longer than {time_limit:g} s") from None
            yield delta
    finally:
        close = getattr(source, "aclose", None)
        if close is not None:
            await close()
