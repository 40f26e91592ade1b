"""Phase two of a run: the player-facing answer, streamed from the model over the whole trace, with
the loop's own answer as the fallback when synthesis is skipped, fails or yields nothing.

The answer stays in the player's language (issue 28): the first letters of the stream are held until
their language is clear; a reply in the wrong language is dropped unseen, asked for once more with an
explicit instruction, and then replaced by a fixed text in the right language (so is a retry that only
repeats the instruction)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from bot.engine import fallbacks
from bot.engine.events import AnswerEvent, Emitter
from bot.engine.parsing import FINAL_ANSWER, parse_action
from bot.engine.prompts import synthesis_messages
from bot.engine.results import NO_SYNTHESIS, AgentResult
from bot.engine.trace import format_trace
from bot.llm.base import LLM
from bot.vocabulary.language import detect_language, reply_language
from bot.vocabulary.model_notes import talks_of_its_language

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
    # A message of ids and marks only ("ORD001?") has no language to hold the answer to.
    want = detect_language(question) if reply_language(question, min_letters=0) else None
    if result.synthesized:
        trace = format_trace(result.messages, result_chars)
        for attempt in range(2):
            messages = synthesis_messages(question, trace, result.answer, insist=attempt > 0)
            # The retry is held whole: a small model may answer it by repeating the instruction.
            gate = LanguageGate(want, hold_all=attempt > 0)
            shape = ActionShape()
            stream = _bounded(llm.stream_chat(messages, purpose="synthesis"), time_limit)
            try:
                async for delta in stream:
                    for out in (o for text in shape.feed(delta) for o in gate.feed(text)):
                        produced = True
                        await emit(AnswerEvent(channel="answer", status="delta", content=out))
                        yield out
                    if gate.wrong:
                        break
                if not gate.wrong:
                    for text in shape.finish():
                        for out in gate.feed(text):
                            produced = True
                            await emit(AnswerEvent(channel="answer", status="delta", content=out))
                            yield out
                for out in gate.finish():
                    produced = True
                    await emit(AnswerEvent(channel="answer", status="delta", content=out))
                    yield out
            except AssertionError:
                raise
            except Exception as exc:  # the edge: any synthesis failure falls back to the loop's answer
                log.warning(
                    "answer synthesis failed (%s: %s); using the loop's answer", type(exc).__name__, exc
                )
                # Text already streamed cannot be taken back here: the caller replaces it with
                # `result.answer` when this is set (see Conversations).
                result.synthesis_error = f"{type(exc).__name__}: {exc}"
                break
            finally:
                await stream.aclose()
            if not gate.wrong:
                break
            log.info("the answer was not in %s (attempt %d); it was not shown", want, attempt + 1)
        else:
            text = fallbacks.wrong_language_text(want or "ko")
            produced = True
            await emit(AnswerEvent(channel="answer", status="delta", content=text))
            yield text
    if not produced and result.answer:
        answer = result.answer
        model_written = result.stopped_reason not in NO_SYNTHESIS  # engine texts: already in ctx.locale
        if want and model_written and reply_language(answer, min_letters=0) not in (None, want):
            answer = fallbacks.wrong_language_text(want)
        await emit(AnswerEvent(channel="answer", status="delta", content=answer))
        yield answer
    await emit(AnswerEvent(channel="answer", status="done"))


class ActionShape:
    """An answer written as a JSON-mode action is never shown as such: seen live (2026-12-03,
    Qwen2.5-Coder-1.5B), the streamed answer was `{"action": "final_answer", "answer": "you have 7 days
    …"}`, raw, to the player. A reply that opens with `{` or a code fence is held whole; a final answer's
    text is then shown alone, and anything else (a tool call, text that is no action) shows nothing, so the
    loop's own answer stands in. Any other reply passes as it streams."""

    def __init__(self) -> None:
        self.held = ""
        self.holding: bool | None = None

    def feed(self, delta: str) -> list[str]:
        if self.holding is False:
            return [delta]
        self.held += delta
        start = self.held.lstrip()
        if not start or ("```".startswith(start) and len(start) < 3):
            return []  # nothing yet, or a code fence not yet whole ("`ORD101`" is an answer)
        self.holding = start.startswith(("{", "```"))
        if self.holding:
            return []
        out, self.held = self.held, ""
        return [out]

    def finish(self) -> list[str]:
        """At the end of the stream: a held action's answer text, if it is a final answer (or what was
        held undecided: a reply of one or two backticks)."""
        if self.holding is None:
            return [self.held] if self.held.strip() else []
        if not self.holding:
            return []
        action = parse_action(self.held)
        if action is None or action.kind != FINAL_ANSWER or not action.answer.strip():
            log.info("the streamed answer was an action, not an answer; the loop's answer stands")
            return []
        return [action.answer]


class LanguageGate:
    """Holds the first deltas of an answer until their language is clear, then lets the stream through;
    `wrong` is set (and nothing shown) when the reply is in another language than the player's.

    `hold_all` (the retry after a wrong-language reply) holds the whole reply to the end, and a reply
    that talks about its own language (the instruction echoed back: "다시 한 번 Korean으로 답하세요")
    is wrong too."""

    def __init__(self, want: str | None, *, hold_all: bool = False) -> None:
        self.want = want
        self.hold_all = hold_all
        self.held = ""
        self.decided = False
        self.wrong = False

    def feed(self, delta: str) -> list[str]:
        if not delta:
            return []
        if self.hold_all:
            self.held += delta
            return []
        if self.decided or self.want is None:
            return [delta]
        self.held += delta
        return self._decide(reply_language(self.held))

    def finish(self) -> list[str]:
        """At the end of the stream: decide on whatever letters there are."""
        if self.decided or self.wrong or not self.held:
            return []
        if self.hold_all and talks_of_its_language(self.held):
            self.wrong = True
            return []
        if self.want is None:
            self.decided = True
            return [self.held]
        return self._decide(reply_language(self.held, min_letters=0) or self.want)

    def _decide(self, language: str | None) -> list[str]:
        if language is None:
            return []
        if language != self.want:
            self.wrong = True
            return []
        self.decided = True
        return [self.held]


class SynthesisTimeout(TimeoutError):
    """The answer stream ran past its time limit."""


async def _bounded(stream: AsyncIterator[str], time_limit: float | None) -> AsyncIterator[str]:
    """`stream`'s deltas until `time_limit` seconds have passed (each wait bounded, so a stalled stream
    and an endless one both end); the stream is closed either way.

    One timer serves the whole stream (a timeout context per delta cost ~5 % of a run): it cancels the
    task only while it waits for the next delta, never the consumer's code that runs between deltas; a
    deadline passed between deltas ends the stream at the next wait."""
    source = aiter(stream)
    try:
        if time_limit is None:
            async for delta in source:
                yield delta
            return
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        waiting = fired = False

        def expire() -> None:
            nonlocal fired
            fired = True
            if waiting:
                task.cancel()

        timer = loop.call_at(loop.time() + time_limit, expire)
        cancelling = task.cancelling()
        try:
            while True:
                if fired:
                    raise SynthesisTimeout(f"the answer took longer than {time_limit:g} s")
                waiting = True
                try:
                    delta = await anext(source)
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    # Ours only when the timer fired and no one else asked to cancel (as asyncio.timeout).
                    if fired and task.uncancel() <= cancelling:
                        raise SynthesisTimeout(f"the answer took longer than {time_limit:g} s") from None
                    raise
                finally:
                    waiting = False
                yield delta
        finally:
            timer.cancel()
    finally:
        close = getattr(source, "aclose", None)
        if close is not None:
            await close()
