"""The LLM protocol every model implements (OpenAI-compatible endpoint or scripted), its typed results
and the one exception type of the edge, `LLMError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

PURPOSES: tuple[str, ...] = ("loop", "synthesis", "select_tools", "compact", "structured")
"""Why a call is made; scripted models answer by purpose, real ones only log it."""

API_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
"""The message keys the Chat Completions API accepts from us; anything else is engine bookkeeping."""


class LLMError(Exception):
    """The model endpoint failed after the configured retries (network, timeout, HTTP error, bad body).

    The message is safe to log and never contains the API key.
    """

    def __init__(self, message: str, *, status_code: int | None = None, kind: str = "error") -> None:
        super().__init__(message)
        self.status_code = status_code
        """HTTP status when the endpoint answered with an error, else None."""
        self.kind = kind
        """`timeout`, `connection`, `rate_limit`, `status`, `bad_response` or `error`."""


@dataclass
class Usage:
    """Token counts as the endpoint reported them (zero when it reported none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage | None) -> None:
        """Accumulate `other` into this one (in place)."""
        if other is not None:
            self.prompt_tokens += other.prompt_tokens
            self.completion_tokens += other.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for; `arguments` is the raw JSON text it produced."""

    id: str
    name: str
    arguments: str = "{}"

    def to_message(self) -> dict[str, Any]:
        """The entry of an assistant message's `tool_calls` list."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass
class LLMResult:
    """One non-streaming completion."""

    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning_content: str | None = None
    """Extended thinking some endpoints return beside the content (DeepSeek-style `reasoning_content`)."""
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None


def api_message(message: dict[str, Any]) -> dict[str, Any]:
    """A copy of `message` with only the keys the API accepts (drops `pinned`, `_id`, …)."""
    return {k: v for k, v in message.items() if k in API_MESSAGE_KEYS}


@runtime_checkable
class LLM(Protocol):
    """What the engine needs from a model. One instance serves a whole agent run."""

    abilities: dict[str, Any]
    """`tool_call`, `json_mode`, `streaming` (bools) and `context_window` (tokens); declared, never guessed."""

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None,
        response_format: dict[str, Any] | None = None,
        purpose: str = "loop",
    ) -> LLMResult: ...

    def stream_chat(
        self, messages: list[dict[str, Any]], *, purpose: str = "synthesis"
    ) -> AsyncIterator[str]:
        """Yield text deltas of one streaming completion (an async generator)."""
        ...


DEFAULT_ABILITIES: dict[str, Any] = {
    "tool_call": True,
    "json_mode": True,
    "streaming": True,
    "context_window": 32_000,
}


def merged_abilities(abilities: dict[str, Any] | None) -> dict[str, Any]:
    """Fill missing ability keys with the defaults (a model config may name only some)."""
    merged = dict(DEFAULT_ABILITIES)
    if abilities:
        merged.update(abilities)
    return merged
