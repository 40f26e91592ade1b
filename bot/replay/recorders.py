"""The model of a replayed turn, noting what each loop call was sent (for `expect.model_saw`) and what it
replied, the answer it streamed included (the live report's record of where a reply's text came from)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from bot.llm.function import FunctionLLM, ModelRequest, forward, forward_stream

LoopInputs = list[tuple[int | None, list[dict[str, Any]]]]

SYNTHESIS_MARK = "[synthesis stream] "
"""How a reply streamed for the player's answer (`purpose="synthesis"`, `bot.engine.synthesis`) starts in
`replies`: the loop's replies are the model's steps, this one is the text the player was streamed."""


def recording(
    model: Any,
    loop_inputs: LoopInputs,
    step_of: Callable[[int], int | None],
    replies: list[str] | None = None,
) -> FunctionLLM:
    """`model`, with every loop call's messages noted in `loop_inputs` beside its step: `step_of(n)` for
    the n-th loop call (the script step that served it, or n itself for a live model); each loop reply's
    text (or its tool calls) in `replies` when given, and each streamed answer's text, marked
    (`SYNTHESIS_MARK`), as it streams (a stream cut short keeps what it had yielded)."""

    async def answer(request: ModelRequest) -> Any:
        if request.purpose != "loop":
            return await forward(model, request)
        n = len(loop_inputs)
        try:
            result = await forward(model, request)
            if replies is not None:
                calls = [f"{c.name}({c.arguments})" for c in result.tool_calls]
                replies.append((result.content or "") + (" " + " ".join(calls) if calls else ""))
            return result
        finally:
            loop_inputs.append((step_of(n), list(request.messages)))

    async def stream(request: ModelRequest) -> AsyncIterator[str]:
        if replies is None or request.purpose != "synthesis":
            async for piece in forward_stream(model, request):
                yield piece
            return
        # Written as it streams, not when the stream ends: a stream the engine cuts short is closed from
        # outside, and this generator's own end would come later (when it is collected).
        at = len(replies)
        replies.append(SYNTHESIS_MARK)
        async for piece in forward_stream(model, request):
            replies[at] += piece
            yield piece

    return FunctionLLM(answer, stream_function=stream, abilities=model.abilities)
