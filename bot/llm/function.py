"""A model whose every answer comes from a Python function (as pydantic-ai's FunctionModel).

Tests write the behaviour they need as a function of the request instead of subclassing a model:
fail one purpose, answer from a queue, wait on an event, wrap a scripted model.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.llm.base import LLMResult, merged_abilities
from bot.llm.hooks import LLMObserver, observed, observed_stream


@dataclass(frozen=True)
class ModelRequest:
    """One call the model received; what the function is given beside the messages."""

    messages: list[dict[str, Any]]
    purpose: str
    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = None
    response_format: dict[str, Any] | None = None
    stream: bool = False


Reply = LLMResult | str
ChatFunction = Callable[[ModelRequest], Reply | Awaitable[Reply]]
StreamFunction = Callable[[ModelRequest], AsyncIterator[str]]


class FunctionLLM:
    """The LLM protocol served by `function(request) -> LLMResult | str` (sync or async; may raise).

    `stream_function(request)` is an async generator of text deltas for `stream_chat`; without one a
    stream yields the content `function` returns for the request, in one piece.
    """

    def __init__(
        self,
        function: ChatFunction,
        *,
        stream_function: StreamFunction | None = None,
        abilities: dict[str, Any] | None = None,
        observer: LLMObserver | None = None,
    ) -> None:
        self.function = function
        self.observer = observer
        """Told about every finished call (`bot.llm.hooks`)."""
        self.stream_function = stream_function
        self.abilities = merged_abilities(abilities)
        self.requests: list[ModelRequest] = []
        """Every request in order (chat and stream)."""

    def __repr__(self) -> str:
        return f"FunctionLLM({getattr(self.function, '__name__', self.function)!r})"

    async def _reply(self, request: ModelRequest) -> LLMResult:
        reply = self.function(request)
        if inspect.isawaitable(reply):
            reply = await reply
        return LLMResult(content=reply) if isinstance(reply, str) else reply

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None,
        response_format: dict[str, Any] | None = None,
        purpose: str = "loop",
    ) -> LLMResult:
        request = ModelRequest(list(messages), purpose, tools, tool_choice, response_format)
        self.requests.append(request)
        return await observed(self.observer, purpose, self._reply(request))

    def stream_chat(
        self, messages: list[dict[str, Any]], *, purpose: str = "synthesis"
    ) -> AsyncIterator[str]:
        request = ModelRequest(list(messages), purpose, stream=True)
        return observed_stream(self.observer, purpose, self._stream(request))

    async def _stream(self, request: ModelRequest) -> AsyncIterator[str]:
        self.requests.append(request)
        if self.stream_function is not None:
            async for piece in self.stream_function(request):
                yield piece
            return
        content = (await self._reply(request)).content
        if content:
            yield content


async def forward(model: Any, request: ModelRequest) -> LLMResult:
    """Pass a chat `request` on to another model unchanged (for a function that alters only some calls)."""
    return await model.chat(
        request.messages,
        tools=request.tools,
        tool_choice=request.tool_choice,
        response_format=request.response_format,
        purpose=request.purpose,
    )


def forward_stream(model: Any, request: ModelRequest) -> AsyncIterator[str]:
    """Pass a stream `request` on to another model unchanged."""
    return model.stream_chat(request.messages, purpose=request.purpose)


def around(model: Any, before: Callable[[ModelRequest], Awaitable[None] | None]) -> FunctionLLM:
    """A function model that runs `before(request)` (it may wait, move a clock or raise) and then forwards
    every chat and stream call to `model`, whose abilities it declares."""

    async def answer(request: ModelRequest) -> LLMResult:
        waited = before(request)
        if inspect.isawaitable(waited):
            await waited
        return await forward(model, request)

    async def stream(request: ModelRequest) -> AsyncIterator[str]:
        waited = before(request)
        if inspect.isawaitable(waited):
            await waited
        async for piece in forward_stream(model, request):
            yield piece

    return FunctionLLM(answer, stream_function=stream, abilities=model.abilities)
