"""Metering adapters: an LLM and a channel surface that report each call to an observer hook.

The observer is a protocol (`ArcaMetrics` implements both), so nothing here knows Prometheus; the
adapters expose exactly the protocol they wrap (`LLM`: abilities, chat, stream_chat; `Surface`:
max_chars, send, edit, react, delete) instead of forwarding every attribute.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable
from typing import Any, Protocol


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


class SurfaceObserver(Protocol):
    """Told about every channel send, edit and react."""

    def record_edit_latency(self, seconds: float, *, op: str = "edit", ok: bool = True) -> None: ...


class MeteredLLM:
    """Any `LLM` (OpenAI or scripted) whose calls are reported to `observer`: latency per purpose, time
    to the first streamed delta, tokens, failures."""

    def __init__(self, inner: Any, observer: LLMObserver) -> None:
        self.inner = inner
        self.observer = observer
        # Token accounting from the model's cumulative `usage` (OpenAILLM keeps one, streams included):
        # each finished call books the growth since the last booking, so every token is counted once
        # even when runs share the model; without `usage`, a chat result's own usage is booked.
        self._booked = self._cumulative()

    @property
    def abilities(self) -> dict[str, Any]:
        return self.inner.abilities

    @property
    def model(self) -> str | None:
        return getattr(self.inner, "model", None)

    @property
    def usage(self) -> Any:
        return getattr(self.inner, "usage", None)

    def __repr__(self) -> str:
        return f"MeteredLLM({self.inner!r})"

    def _cumulative(self) -> tuple[int, int] | None:
        usage = getattr(self.inner, "usage", None)
        if usage is None or not hasattr(usage, "prompt_tokens"):
            return None
        return int(usage.prompt_tokens), int(usage.completion_tokens)

    def _tokens(self, result_usage: Any = None) -> tuple[int, int]:
        now = self._cumulative()
        if now is not None and self._booked is not None:
            grown = now[0] - self._booked[0], now[1] - self._booked[1]
            self._booked = now
            return grown
        if result_usage is not None:
            return (
                int(getattr(result_usage, "prompt_tokens", 0) or 0),
                int(getattr(result_usage, "completion_tokens", 0) or 0),
            )
        return 0, 0

    def _report(
        self,
        purpose: str,
        start: float,
        *,
        first_token: float | None = None,
        usage: Any = None,
        error: BaseException | None = None,
    ) -> None:
        prompt, completion = self._tokens(usage)
        kind = None if error is None else str(getattr(error, "kind", type(error).__name__))
        self.observer.on_llm_call(
            purpose,
            time.perf_counter() - start,
            first_token=first_token,
            prompt_tokens=prompt,
            completion_tokens=completion,
            error_kind=kind,
        )

    async def chat(self, messages: list[dict[str, Any]], *, purpose: str = "loop", **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            result = await self.inner.chat(messages, purpose=purpose, **kwargs)
        except Exception as exc:
            self._report(purpose, start, error=exc)
            raise
        self._report(purpose, start, usage=getattr(result, "usage", None))
        return result

    async def stream_chat(
        self, messages: list[dict[str, Any]], *, purpose: str = "synthesis"
    ) -> AsyncIterator[str]:
        start = time.perf_counter()
        first: float | None = None
        try:
            async for delta in self.inner.stream_chat(messages, purpose=purpose):
                if first is None:
                    first = time.perf_counter() - start
                yield delta
        except Exception as exc:
            self._report(purpose, start, first_token=first, error=exc)
            raise
        self._report(purpose, start, first_token=first)


class MeteredSurface:
    """A channel `Surface` whose send / edit / react latencies are reported to `observer`."""

    def __init__(self, inner: Any, observer: SurfaceObserver) -> None:
        self.inner = inner
        self.observer = observer

    # Properties that raise AttributeError when the inner surface lacks the attribute, so a caller's
    # `getattr(surface, "max_chars", default)` sees the same as on the inner surface.
    @property
    def max_chars(self) -> int:
        return self.inner.max_chars

    @property
    def delete(self) -> Any:
        """The inner surface's optional `delete(handle)`."""
        return self.inner.delete

    async def _timed(self, op: str, call: Awaitable[Any]) -> Any:
        start = time.perf_counter()
        try:
            result = await call
        except Exception:
            self.observer.record_edit_latency(time.perf_counter() - start, op=op, ok=False)
            raise
        self.observer.record_edit_latency(time.perf_counter() - start, op=op)
        return result

    async def send(self, text: str) -> Any:
        return await self._timed("send", self.inner.send(text))

    async def edit(self, handle: Any, text: str) -> None:
        await self._timed("edit", self.inner.edit(handle, text))

    async def react(self, ref: Any, emoji: str) -> None:
        await self._timed("react", self.inner.react(ref, emoji))
