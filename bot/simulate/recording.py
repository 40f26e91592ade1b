"""The bot's model during a simulated run, recorded: each loop reply becomes the transcript step that
would make the scripted model reply the same (`--save-transcripts`), the streamed answer an `answer`
step, and every reported token is counted."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from bot.engine.parsing import parse_action
from bot.llm.base import LLMResult, Usage
from bot.llm.function import FunctionLLM, ModelRequest, forward


def _args(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def step_of(result: LLMResult, *, native: bool) -> dict[str, Any]:
    """The script step (DESIGN.md §9) that makes the scripted model give this loop reply."""
    calls = [{"tool": c.name, "args": _args(c.arguments)} for c in result.tool_calls]
    if len(calls) == 1:
        return calls[0]
    if calls:
        return {"tools": calls}
    content = result.content or ""
    if native:
        return {"final": content} if content.strip() else {"raw": content}
    action = parse_action(content)
    if action is None:
        return {"raw": content}
    if action.kind == "tool_call":
        return {"tool": action.tool, "args": action.args if isinstance(action.args, dict) else {}}
    return {"final": action.answer}


class RecordedModel:
    """Wraps the bot's model for one run; `take_steps()` hands over one turn's steps."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.usage = Usage()
        self._steps: list[dict[str, Any]] = []
        self.llm = FunctionLLM(self._chat, stream_function=self._stream, abilities=model.abilities)

    @property
    def native(self) -> bool:
        return bool(self.model.abilities.get("tool_call"))

    async def _chat(self, request: ModelRequest) -> LLMResult:
        result = await forward(self.model, request)
        self.usage.add(result.usage)
        if request.purpose == "loop":
            self._steps.append(step_of(result, native=self.native))
        elif request.purpose == "synthesis" and result.content:  # a model that does not stream
            self._steps.append({"answer": result.content})
        return result

    async def _stream(self, request: ModelRequest) -> AsyncIterator[str]:
        pieces: list[str] = []
        async for piece in self.model.stream_chat(request.messages, purpose=request.purpose):
            pieces.append(piece)
            yield piece
        if request.purpose == "synthesis" and pieces:
            self._steps.append({"answer": "".join(pieces)})

    def take_steps(self) -> list[dict[str, Any]]:
        steps, self._steps = self._steps, []
        return steps
