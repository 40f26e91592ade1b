"""What the web channel's routes share: their collaborators (`WebDeps`), the JSON error they raise, the
chat request body and the registry of open event streams."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from pydantic import BaseModel, Field

from bot.channels.web.identity import IdentityService
from bot.channels.web.stream import RunStream
from bot.conversations import Conversations

THREAD_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
STREAM_RETENTION = 600.0
"""Seconds a finished stream stays resumable (`Last-Event-ID`); after that the history endpoint serves it."""
HISTORY_LIMIT = 200

NO_LLM_MESSAGE = (
    "No LLM is configured: set ARCA_MODEL and OPENAI_API_KEY (or OPENAI_BASE_URL for Ollama / vLLM / "
    "llama.cpp) and restart `arca-bot web`."
)
"""For the operator: the log at start-up and `arca-bot doctor` (never the player's page)."""
NO_LLM_PLAYER_MESSAGE = (
    "지금은 답변할 수 없어요. 잠시 후 다시 시도하시거나 상담원 연결을 요청해 주세요. / "
    "We can't answer right now. Please try again later or ask to be put through to our support team."
)


class WebError(Exception):
    """An error answered as JSON `{"error": code, "message": ...}` with `status`."""

    def __init__(
        self, status: int, code: str, message: str, *, headers: dict[str, str] | None = None, **extra: Any
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}
        self.extra = extra


class ChatRequest(BaseModel):
    thread: str = Field(
        pattern=THREAD_PATTERN, description="The conversation's name on this page, e.g. `main`."
    )
    message: str = Field(description="What the player wrote.")


@dataclass
class WebDeps:
    """Everything the web app needs, built by the caller (`runner.py`, tests)."""

    conversations: Conversations
    identities: IdentityService
    llm_ready: bool = True
    """False: `/api/chat` answers 503 and the page says what to configure."""
    max_message_chars: int = 4_000
    rate_limit: int = 20
    rate_limit_ip: int = 60
    rate_window: float = 60.0
    new_visitors_ip: int = 10
    """New anonymous visitors (requests without a visitor cookie) one address may start per `rate_window`."""
    trusted_proxies: list[str] = field(default_factory=list)
    """`ARCA_WEB_TRUSTED_PROXIES`: addresses whose `X-Forwarded-For` / `-Proto` name the client (uvicorn's
    `forwarded_allow_ips`); none by default, so a client cannot pick the address its limits count."""
    origins: list[str] = field(default_factory=list)
    debug_view: bool = False
    """`ARCA_WEB_DEBUG`: the widget may show step details (`#debug=1`)."""
    secure_cookies: bool = False
    """Set the visitor cookie `Secure; SameSite=None` (the page is embedded cross-site over HTTPS)."""
    conversation_idle_minutes: int = 30
    resolution_window_minutes: int = 60
    """The support analytics' conversation gap and resolution window (`ARCA_CONVERSATION_IDLE_MINUTES`,
    `ARCA_RESOLUTION_WINDOW_MINUTES`), for the console's dashboard: the same figures as `/stats`."""
    index_state: Callable[[], str] = lambda: "ready"
    """`building`, `ready` or `unavailable`: the policy index, for `/healthz`."""
    clock: Callable[[], float] = time.monotonic
    new_id: Callable[[], str] = lambda: uuid.uuid4().hex[:12]

    @classmethod
    def from_settings(
        cls, settings: Any, conversations: Conversations, identities: IdentityService, **kw: Any
    ) -> WebDeps:
        return cls(
            conversations=conversations,
            identities=identities,
            llm_ready=settings.llm_configured,
            max_message_chars=settings.max_message_chars,
            rate_limit=settings.web_rate_limit,
            rate_limit_ip=settings.web_rate_limit_ip,
            rate_window=settings.web_rate_window,
            origins=list(settings.web_origins),
            trusted_proxies=list(settings.web_trusted_proxies),
            conversation_idle_minutes=settings.conversation_idle_minutes,
            resolution_window_minutes=settings.resolution_window_minutes,
            debug_view=settings.web_debug,
            secure_cookies=bool(settings.web_public_url and settings.web_public_url.startswith("https://")),
            **kw,
        )


class StreamRegistry:
    """The open stream of each web thread, and recently finished ones (for `Last-Event-ID`).

    Streams are numbered as they start (`seq`, the `X-Arca-Cursor` a client is given): a client that
    names the last number it knew (`next_after`) gets a stream that started and ended while it was not
    waiting, e.g. a staff reply between two of the widget's waits."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.active: dict[str, RunStream] = {}
        self.finished: dict[str, RunStream] = {}
        """By stream id."""
        self.seq = 0
        """Streams started so far in this process (the latest stream's `seq`)."""
        self._recent: dict[str, list[RunStream]] = {}
        """The open and the retained finished streams of each thread, oldest first."""
        self._waiters: dict[str, list[asyncio.Future[RunStream | None]]] = {}
        self._stopped = False

    def open_stream(self, thread_id: str) -> RunStream | None:
        stream = self.active.get(thread_id)
        return stream if stream is not None and stream.open else None

    def add(self, stream: RunStream) -> None:
        self.seq += 1
        stream.seq = self.seq
        self.active[stream.thread_id] = stream
        self._recent.setdefault(stream.thread_id, []).append(stream)
        for waiter in self._waiters.pop(stream.thread_id, []):
            if not waiter.done():
                waiter.set_result(stream)

    def next_after(self, thread_id: str, seq: int) -> RunStream | None:
        """The thread's first stream (open or finished, still kept) that started after stream `seq`."""
        self.prune()
        return next((s for s in self._recent.get(thread_id, ()) if s.seq > seq), None)

    def waiting(self, thread_id: str) -> int:
        """Requests waiting for the thread's next stream."""
        return len(self._waiters.get(thread_id, ()))

    def release_waiters(self, *, for_good: bool = False) -> None:
        """Every wait ends now, empty; `for_good` (the server stops): later ones end at once too."""
        self._stopped = self._stopped or for_good
        for waiters in list(self._waiters.values()):
            for waiter in list(waiters):
                if not waiter.done():
                    waiter.set_result(None)

    async def wait_stream(self, thread_id: str, within: float) -> RunStream | None:
        """The thread's open stream, or the next one to start within `within` s (e.g. a staff reply;
        it may have ended by the time the caller reads it: its events are kept)."""
        stream = self.open_stream(thread_id)
        if stream is not None or self._stopped:
            return stream
        waiter: asyncio.Future[RunStream | None] = asyncio.get_running_loop().create_future()
        waiters = self._waiters.setdefault(thread_id, [])
        waiters.append(waiter)
        try:
            return await asyncio.wait_for(waiter, within)
        except TimeoutError:
            return None
        finally:
            if waiter in waiters:
                waiters.remove(waiter)
            if not waiters and self._waiters.get(thread_id) is waiters:
                del self._waiters[thread_id]

    def close(self, stream: RunStream) -> None:
        if self.active.get(stream.thread_id) is stream:
            del self.active[stream.thread_id]
        self.finished[stream.id] = stream
        self.prune()

    def prune(self) -> None:
        now = self._clock()
        for sid, stream in list(self.finished.items()):
            if stream.closed_at is not None and now - stream.closed_at > STREAM_RETENTION:
                del self.finished[sid]
                kept = [s for s in self._recent.get(stream.thread_id, ()) if s is not stream]
                if kept:
                    self._recent[stream.thread_id] = kept
                else:
                    self._recent.pop(stream.thread_id, None)

    def find(self, thread_id: str, stream_id: str) -> RunStream | None:
        self.prune()
        active = self.active.get(thread_id)
        if active is not None and active.id == stream_id:
            return active
        stream = self.finished.get(stream_id)
        return stream if stream is not None and stream.thread_id == thread_id else None


def deps_of(request: Request) -> WebDeps:
    return request.app.state.web
