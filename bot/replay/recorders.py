"""The model of a replayed turn, noting what each loop call was sent (for `expect.model_saw`) and what it
replied (the live report's record of a model's unreadable replies)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from bot.llm.function import FunctionLLM, ModelRequest, forward, forward_stream

LoopInputs = list[tuple[int | None, list[dict[str, Any]]]]


def recording(
    model: Any,
    loop_inputs: LoopInputs,
    step_of: Callable[[int], int | None],
    replies: list[str] | None = None,
) -> FunctionLLM:
    """`model`, with every loop call's messages noted in `loop_inputs` beside its step: `step_of(n)` for
    the n-th loop call (the script step that served it, or n itself for a live model); each loop reply's
    text (or its tool calls) in `replies` when given."""

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

    return FunctionLLM(answer, stream_function=partial(forward_stream, model), abilities=model.abilities)
