"""`OpenAILLM`: the LLM protocol over any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM,
Ollama, llama.cpp server, LM Studio) through the official `openai` SDK.

Timeouts and retries are the SDK's (it honours `Retry-After`); every failure that survives them
becomes one `LLMError` whose message never contains the API key.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import openai
from openai import AsyncOpenAI

from bot.llm.base import LLMError, LLMResult, ToolCall, Usage, api_message, merged_abilities
from bot.llm.hooks import LLMObserver, observed, observed_stream

log = logging.getLogger(__name__)

# Local servers (Ollama, llama.cpp) ignore the key, but the SDK refuses to start without one.
_PLACEHOLDER_KEY = "not-needed"
_KEY_PATTERN = re.compile(r"\b(sk-[A-Za-z0-9_\-]{6,})")


class OpenAILLM:
    """One model on one endpoint. Keeps cumulative `usage` and a call count for the footer and benches."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        abilities: dict[str, Any] | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        stream_usage: bool = True,
        observer: LLMObserver | None = None,
    ) -> None:
        self.model = model
        self.observer = observer
        """Told about every finished call (`bot.llm.hooks`)."""
        self.abilities = merged_abilities(abilities)
        self._api_key = api_key or _PLACEHOLDER_KEY
        self._stream_usage = stream_usage
        self._client = AsyncOpenAI(
            api_key=self._api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )
        self.usage = Usage()
        """Tokens used by every call of this instance so far."""
        self.calls = 0

    def __repr__(self) -> str:
        return f"OpenAILLM(model={self.model!r}, base_url={str(self._client.base_url)!r})"

    async def close(self) -> None:
        await self._client.close()

    # ---- errors ------------------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        if self._api_key and self._api_key != _PLACEHOLDER_KEY:
            text = text.replace(self._api_key, "***")
        return _KEY_PATTERN.sub("sk-***", text)

    def _error(self, exc: BaseException) -> LLMError:
        """Translate an SDK / transport failure into an `LLMError` the operator can act on."""
        where = f"model {self.model} at {self._client.base_url}"
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(f"{where}: request timed out", kind="timeout")
        if isinstance(exc, openai.APIConnectionError):
            return LLMError(f"{where}: connection failed ({self._redact(str(exc))})", kind="connection")
        if isinstance(exc, openai.RateLimitError):
            return LLMError(f"{where}: rate limited (HTTP 429)", status_code=429, kind="rate_limit")
        if isinstance(exc, openai.APIStatusError):
            detail = self._redact(str(exc))[:300]
            return LLMError(
                f"{where}: HTTP {exc.status_code}: {detail}", status_code=exc.status_code, kind="status"
            )
        if isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError | ValueError | TypeError):
            return LLMError(
                f"{where}: the endpoint sent a response that is not a chat completion", kind="bad_response"
            )
        return LLMError(f"{where}: {type(exc).__name__}: {self._redact(str(exc))[:300]}")

    # ---- calls -------------------------------------------------------------------------------

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None,
        response_format: dict[str, Any] | None = None,
        purpose: str = "loop",
    ) -> LLMResult:
        call = self._chat(messages, tools, tool_choice, response_format, purpose)
        return await observed(self.observer, purpose, call)

    def stream_chat(
        self, messages: list[dict[str, Any]], *, purpose: str = "synthesis"
    ) -> AsyncIterator[str]:
        usage = Usage()
        return observed_stream(self.observer, purpose, self._stream(messages, purpose, usage), usage)

    async def _chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: Any,
        response_format: dict[str, Any] | None,
        purpose: str,
    ) -> LLMResult:
        kwargs: dict[str, Any] = {"model": self.model, "messages": [api_message(m) for m in messages]}
        if tools:
            kwargs["tools"] = tools
            if tool_choice is not None:
                kwargs["tool_choice"] = tool_choice
        if response_format is not None:
            kwargs["response_format"] = response_format
        self.calls += 1
        try:
            resp = await self._client.chat.completions.create(**kwargs)
            choice = resp.choices[0]
            msg = choice.message
            calls = [
                ToolCall(id=tc.id, name=tc.function.name, arguments=tc.function.arguments or "{}")
                for tc in (msg.tool_calls or [])
                if getattr(tc, "function", None) is not None
            ]
            usage = Usage(
                prompt_tokens=(resp.usage.prompt_tokens or 0) if resp.usage else 0,
                completion_tokens=(resp.usage.completion_tokens or 0) if resp.usage else 0,
            )
            result = LLMResult(
                content=msg.content,
                tool_calls=calls,
                reasoning_content=_reasoning_of(msg),
                usage=usage,
                finish_reason=choice.finish_reason,
            )
        except openai.OpenAIError as exc:
            raise self._error(exc) from None
        except (AttributeError, IndexError, TypeError, ValueError) as exc:
            # A 200 whose body is not a chat completion (garbage, HTML error page, empty choices).
            raise self._error(ValueError(str(exc))) from None
        except Exception as exc:  # transport errors the SDK does not wrap; the edge turns them into LLMError
            raise self._error(exc) from None
        self.usage.add(result.usage)
        log.debug("llm %s purpose=%s usage=%s", self.model, purpose, result.usage)
        return result

    async def _stream(self, messages: list[dict[str, Any]], purpose: str, usage: Usage) -> AsyncIterator[str]:
        """The stream; the tokens the endpoint reports for it are added to `usage` and `self.usage`."""
        if not self.abilities.get("streaming", True):
            result = await self._chat(messages, None, None, None, purpose)
            usage.add(result.usage)
            if result.content:
                yield result.content
            return
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [api_message(m) for m in messages],
            "stream": True,
        }
        if self._stream_usage:
            kwargs["stream_options"] = {"include_usage": True}
        self.calls += 1
        stream = None
        try:
            stream = await self._client.chat.completions.create(**kwargs)
            async for chunk in stream:
                if getattr(chunk, "usage", None):
                    used = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
                    self.usage.add(used)
                    usage.add(used)
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta
                text = getattr(delta, "content", None) if delta is not None else None
                if text:
                    yield text
        except openai.OpenAIError as exc:
            raise self._error(exc) from None
        except (AttributeError, IndexError, TypeError, ValueError) as exc:
            raise self._error(ValueError(str(exc))) from None
        except Exception as exc:  # e.g. the connection dropped mid-stream
            raise self._error(exc) from None
        finally:
            # A reader that stops early (the run's time budget, a guard) closes this generator: close
            # the HTTP response too, so the server sees the client leave and stops generating.
            if stream is not None:
                with contextlib.suppress(Exception):
                    await stream.close()


def _reasoning_of(msg: Any) -> str | None:
    """DeepSeek-style `reasoning_content` (or `reasoning`, as some vLLM builds name it) on the message."""
    for key in ("reasoning_content", "reasoning"):
        value = getattr(msg, key, None)
        if value is None and getattr(msg, "model_extra", None):
            value = msg.model_extra.get(key)
        if isinstance(value, str) and value:
            return value
    return None
