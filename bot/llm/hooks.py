"""The hook every model calls when one of its calls ends: latency per purpose, time to the first streamed
delta, the call's tokens, the failure kind.

A model takes an `observer` (`ArcaMetrics` is one; nothing here knows Prometheus) and runs each chat
call through `observed` and each stream through `observed_stream`: metering is the model's own event,
not an adapter forwarding its calls.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Awaitable
from typing import Protocol

from bot.llm.base import LLMResult, Usage


class LLMObserver(Protocol):
    """Told about every finished LLM call."""

    def on_llm_call(
        self,
        purpose: str,
        seconds: float,
        *,
        first_token: float | None = None,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        error_kind: str | None = None,
    ) -> None: ...


def _report(
    observer: LLMObserver,
    purpose: str,
    start: float,
    usage: Usage | None,
    *,
    first_token: float | None = None,
    error: BaseException | None = None,
) -> None:
    observer.on_llm_call(
        purpose,
        time.perf_counter() - start,
        first_token=first_token,
        prompt_tokens=usage.prompt_tokens if usage is not None else 0,
        completion_tokens=usage.completion_tokens if usage is not None else 0,
        error_kind=None if error is None else str(getattr(error, "kind", type(error).__name__)),
    )


async def observed(observer: LLMObserver | None, purpose: str, call: Awaitable[LLMResult]) -> LLMResult:
    """Await one chat `call`, reporting it (and its result's tokens) to `observer` when it ends."""
    if observer is None:
        return await call
    start = time.perf_counter()
    try:
        result = await call
    except Exception as exc:
        _report(observer, purpose, start, None, error=exc)
        raise
    _report(observer, purpose, start, result.usage)
    return result


async def observed_stream(
    observer: LLMObserver | None, purpose: str, stream: AsyncIterator[str], usage: Usage | None = None
) -> AsyncIterator[str]:
    """Pass `stream` on, reporting it to `observer` when it ends: the time to its first delta and the
    tokens the model counted into `usage` while streaming. Closing this closes `stream` at once (a
    reader that stops early ends the model's HTTP stream, not the garbage collector)."""
    async with contextlib.aclosing(stream) if hasattr(stream, "aclose") else contextlib.nullcontext(stream):
        if observer is None:
            async for delta in stream:
                yield delta
            return
        start = time.perf_counter()
        first: float | None = None
        try:
            async for delta in stream:
                if first is None:
                    first = time.perf_counter() - start
                yield delta
        except Exception as exc:
            _report(observer, purpose, start, usage, first_token=first, error=exc)
            raise
        _report(observer, purpose, start, usage, first_token=first)
