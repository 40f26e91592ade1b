"""The one way either audience's routes answer with server-sent events."""

from __future__ import annotations

from collections.abc import AsyncIterator

from sse_starlette import EventSourceResponse, ServerSentEvent

PING_SECONDS = 15
"""A comment line this often keeps proxies from closing an idle stream."""


def sse_response(
    events: AsyncIterator[ServerSentEvent], *, headers: dict[str, str] | None = None
) -> EventSourceResponse:
    """An SSE response that proxies do not buffer (`X-Accel-Buffering: no`), pinged every `PING_SECONDS`."""
    return EventSourceResponse(
        events, ping=PING_SECONDS, headers={"X-Accel-Buffering": "no", **(headers or {})}
    )
