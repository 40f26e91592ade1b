"""The web channel's HTTP app: the player widget (`GET /`), the chat API streaming seed 000's SSE events,
thread history, stream resumption and `/healthz`.

`create_app(deps)` builds a FastAPI app from its collaborators (`WebDeps`); later features add their
routers to the returned app (`app.include_router(...)`) and read the same `app.state.web`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field, ValidationError
from sse_starlette import EventSourceResponse, ServerSentEvent

from bot.channels.web.identity import ANON_COOKIE, ANON_COOKIE_MAX_AGE, Identity, IdentityService, TokenError
from bot.channels.web.limits import SlidingWindowLimiter, check_all
from bot.channels.web.stream import RunStream, WebSurface
from bot.conversations import Conversations, Incoming, detect_locale
from bot.engine.interrupts import INTERRUPT_PREFIX
from bot.guards.input import check_input
from bot.guards.output import OutputGuard
from tools.base import Actor

log = logging.getLogger(__name__)

THREAD_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
STREAM_RETENTION = 600.0
"""Seconds a finished stream stays resumable (`Last-Event-ID`); after that the history endpoint serves it."""
HISTORY_LIMIT = 200

NO_LLM_MESSAGE = (
    "No LLM is configured: set ARCA_MODEL and OPENAI_API_KEY (or OPENAI_BASE_URL for Ollama / vLLM / "
    "llama.cpp) and restart `arca-bot web`."
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
    origins: list[str] = field(default_factory=list)
    secure_cookies: bool = False
    """Set the visitor cookie `Secure; SameSite=None` (the page is embedded cross-site over HTTPS)."""
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
            secure_cookies=bool(settings.web_public_url and settings.web_public_url.startswith("https://")),
            **kw,
        )


class StreamRegistry:
    """The open stream of each web thread, and recently finished ones (for `Last-Event-ID`)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.active: dict[str, RunStream] = {}
        self.finished: dict[str, RunStream] = {}
        """By stream id."""

    def open_stream(self, thread_id: str) -> RunStream | None:
        stream = self.active.get(thread_id)
        return stream if stream is not None and stream.open else None

    def add(self, stream: RunStream) -> None:
        self.active[stream.thread_id] = stream

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

    def find(self, thread_id: str, stream_id: str) -> RunStream | None:
        self.prune()
        active = self.active.get(thread_id)
        if active is not None and active.id == stream_id:
            return active
        stream = self.finished.get(stream_id)
        return stream if stream is not None and stream.thread_id == thread_id else None


# ---- app ----------------------------------------------------------------------------------------------


def create_app(deps: WebDeps) -> FastAPI:
    """The web channel's FastAPI app. `app.state.web` is `deps`; `app.state.streams` the stream registry."""
    app = FastAPI(title="Arca support web channel", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.web = deps
    app.state.streams = StreamRegistry(deps.clock)
    app.state.limits = (
        SlidingWindowLimiter(deps.rate_limit, deps.rate_window, clock=deps.clock),
        SlidingWindowLimiter(deps.rate_limit_ip, deps.rate_window, clock=deps.clock),
    )
    if deps.origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=deps.origins,
            allow_credentials=True,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
            expose_headers=["Retry-After"],
        )

    @app.exception_handler(WebError)
    async def web_error(request: Request, exc: WebError) -> JSONResponse:
        return JSONResponse(
            {"error": exc.code, "message": exc.message, **exc.extra},
            status_code=exc.status,
            headers=exc.headers,
        )

    app.include_router(page_router())
    app.include_router(chat_router())
    from bot.channels.web.staff import install as install_staff_console  # issue 16: the /staff console

    install_staff_console(app)
    app.mount("/static", StaticFiles(directory=str(_static_dir())), name="static")
    return app


def _static_dir() -> Any:
    return resources.files("bot.channels.web") / "static"


def deps_of(request: Request) -> WebDeps:
    return request.app.state.web


# ---- identity -----------------------------------------------------------------------------------------


@dataclass
class Caller:
    identity: Identity
    new_cookie: str | None = None

    @property
    def actor(self) -> Actor:
        return Actor(
            discord_id=None, player_id=self.identity.player_id, display_name=f"web:{self.identity.key}"
        )


def resolve_caller(request: Request) -> Caller:
    """The bearer token's player; else the visitor cookie's anonymous identity; else a new visitor."""
    deps = deps_of(request)
    auth = request.headers.get("authorization")
    if auth is not None:
        scheme, _, token = auth.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise WebError(401, "token_invalid", "Send the player token as `Authorization: Bearer <token>`.")
        try:
            return Caller(deps.identities.verify_token(token.strip()))
        except TokenError as exc:
            raise WebError(
                401, exc.code, exc.message, headers={"WWW-Authenticate": 'Bearer error="invalid_token"'}
            ) from None
    visitor = deps.identities.read_visitor(request.cookies.get(ANON_COOKIE))
    if visitor is not None:
        return Caller(visitor)
    identity, cookie = deps.identities.new_visitor()
    return Caller(identity, cookie)


def _set_cookie(response: Response, caller: Caller, deps: WebDeps) -> None:
    if caller.new_cookie is None:
        return
    response.set_cookie(
        ANON_COOKIE,
        caller.new_cookie,
        max_age=ANON_COOKIE_MAX_AGE,
        httponly=True,
        secure=deps.secure_cookies,
        samesite="none" if deps.secure_cookies else "lax",
        path="/",
    )


def _identity_json(identity: Identity) -> dict[str, Any]:
    return {"kind": identity.kind, "player_id": identity.player_id}


# ---- routes: page and health ----------------------------------------------------------------------------


def page_router() -> APIRouter:
    router = APIRouter()

    @router.get("/", include_in_schema=False)
    async def index(request: Request) -> Response:
        response = FileResponse(str(_static_dir() / "index.html"), media_type="text/html; charset=utf-8")
        response.headers["Cache-Control"] = "no-store"
        deps = deps_of(request)
        # Embeddable in an iframe by the allowed origins (anywhere when none are configured).
        ancestors = " ".join(["'self'", *deps.origins]) if deps.origins else "*"
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
            f"connect-src 'self'; frame-ancestors {ancestors}"
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    @router.get("/healthz")
    async def healthz(request: Request) -> dict[str, Any]:
        deps = deps_of(request)
        return {"status": "ok", "llm": deps.llm_ready, "policy_index": deps.index_state()}

    return router


# ---- routes: chat ---------------------------------------------------------------------------------------


def chat_router() -> APIRouter:
    router = APIRouter(prefix="/api")

    @router.get("/status")
    async def status(request: Request) -> Response:
        """What the page needs to start: who it is, whether the bot can answer, the message limit."""
        deps = deps_of(request)
        caller = resolve_caller(request)
        response = JSONResponse(
            {
                "llm": deps.llm_ready,
                "message": None if deps.llm_ready else NO_LLM_MESSAGE,
                "identity": _identity_json(caller.identity),
                "max_message_chars": deps.max_message_chars,
            }
        )
        _set_cookie(response, caller, deps)
        return response

    @router.post("/chat")
    async def chat(request: Request) -> Response:
        deps = deps_of(request)
        if not deps.llm_ready:
            raise WebError(503, "llm_not_configured", NO_LLM_MESSAGE)
        caller = resolve_caller(request)
        body = await _read_chat_request(request, deps)
        verdict = check_input(body.message, max_chars=deps.max_message_chars)
        if verdict.reason_code == "too_long":
            raise WebError(413, "message_too_long", verdict.reply, limit=deps.max_message_chars)
        if not body.message.strip():
            raise WebError(400, "empty_message", "The message is empty.")
        ip = request.client.host if request.client else "unknown"
        limit_id, limit_ip = request.app.state.limits
        wait = check_all([(limit_id, caller.identity.key), (limit_ip, ip)])
        if wait:
            raise WebError(
                429,
                "rate_limited",
                f"메시지가 너무 많습니다. {wait}초 후에 다시 보내 주세요. / Too many messages; try again in {wait} s.",
                headers={"Retry-After": str(wait)},
                retry_after=wait,
            )
        thread_id = caller.identity.thread_id(body.thread)
        streams: StreamRegistry = request.app.state.streams
        incoming = Incoming(thread_id, caller.actor, body.message, ref=None)
        conversations = deps.conversations
        guard = await OutputGuard.for_actor(
            conversations.store,
            caller.actor,
            thread_id=thread_id,
            locale=detect_locale(body.message),
            protected_texts=[conversations.system_prompt],
        )
        # No await from here on: two POSTs to one thread cannot both open a stream.
        stream = streams.open_stream(thread_id)
        if stream is not None:
            _drive(deps, streams, stream, incoming)
            response: Response = JSONResponse({"joined": stream.id}, status_code=202)
        else:
            stream = RunStream(deps.new_id(), thread_id, clock=deps.clock)
            stream.surface = WebSurface(
                stream, guard=guard, protected_texts=[conversations.system_prompt], clock=deps.clock
            )
            streams.add(stream)
            _drive(deps, streams, stream, incoming)
            response = _sse(stream, 0)
        _set_cookie(response, caller, deps)
        return response

    @router.get("/threads/{thread}")
    async def history(thread: str, request: Request) -> Response:
        """The thread's messages as the player saw them; 404 for a thread this identity never wrote in."""
        deps = deps_of(request)
        caller = resolve_caller(request)
        _check_thread_name(thread)
        thread_id = caller.identity.thread_id(thread)
        rows = await deps.conversations.memory.recent(thread_id, limit=HISTORY_LIMIT)
        stream = request.app.state.streams.open_stream(thread_id)
        if not rows and stream is None:
            raise WebError(404, "thread_not_found", "No such conversation.")
        messages = []
        for row in rows:
            content = row.content or ""
            if row.role == "user" and content.startswith(INTERRUPT_PREFIX):
                content = content[len(INTERRUPT_PREFIX) :].strip()
            messages.append(
                {
                    "role": row.role,
                    "content": content,
                    "at": row.created_at.isoformat() if row.created_at else None,
                }
            )
        response = JSONResponse(
            {
                "thread": thread,
                "running": stream is not None,
                "run": stream.id if stream is not None else None,
                "messages": messages,
            }
        )
        _set_cookie(response, caller, deps)
        return response

    @router.get("/threads/{thread}/events")
    async def resume(thread: str, request: Request) -> Response:
        """Reconnect to a thread's stream: events after `Last-Event-ID`, then live ones; 204 when none runs."""
        caller = resolve_caller(request)
        _check_thread_name(thread)
        thread_id = caller.identity.thread_id(thread)
        streams: StreamRegistry = request.app.state.streams
        last = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
        stream = None
        after = 0
        if last:
            stream = streams.find(thread_id, last.rpartition("-")[0])
            if stream is not None:
                after = stream.seq_of(last)
        if stream is None:
            stream = streams.open_stream(thread_id)
        if stream is None:
            return Response(status_code=204)
        return _sse(stream, after)

    return router


def _check_thread_name(thread: str) -> None:
    if not re.fullmatch(THREAD_PATTERN, thread):
        raise WebError(400, "invalid_request", "thread: 1-64 letters, digits, _ or -.")


async def _read_chat_request(request: Request, deps: WebDeps) -> ChatRequest:
    """The JSON body, with one clear error for each way it can be wrong."""
    max_bytes = deps.max_message_chars * 4 + 4_096
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise WebError(413, "body_too_large", f"The request body is larger than {max_bytes:,} bytes.")
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > max_bytes:
            raise WebError(413, "body_too_large", f"The request body is larger than {max_bytes:,} bytes.")
    content_type = request.headers.get("content-type", "")
    if "json" not in content_type.lower():
        raise WebError(
            415,
            "unsupported_media_type",
            'Send JSON: Content-Type: application/json, {"thread": "main", "message": "..."}',
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WebError(400, "invalid_json", f"The body is not valid JSON ({exc}).") from None
    if not isinstance(data, dict):
        raise WebError(
            400, "invalid_request", 'The body must be a JSON object: {"thread": "main", "message": "..."}'
        )
    try:
        return ChatRequest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "body"
        hint = "1-64 letters, digits, _ or -" if where == "thread" else first.get("msg", "invalid")
        raise WebError(400, "invalid_request", f"{where}: {hint}.", field=where) from None


def _drive(deps: WebDeps, streams: StreamRegistry, stream: RunStream, incoming: Incoming) -> None:
    """Hand the message to `Conversations` in a task of its own: the run outlives the HTTP request."""
    task = asyncio.get_running_loop().create_task(deps.conversations.handle(incoming, stream.surface))

    def on_close() -> None:
        stream.surface.close()
        streams.close(stream)

    stream.feed(task, on_close)
    task.add_done_callback(_log_failure)


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a web message failed", exc_info=task.exception())


def _sse(stream: RunStream, after: int) -> EventSourceResponse:
    async def events() -> AsyncIterator[ServerSentEvent]:
        async for event in stream.follow(after):
            yield ServerSentEvent(
                data=json.dumps(event.payload, ensure_ascii=False, separators=(",", ":")),
                event=event.channel,
                id=event.id,
            )

    return EventSourceResponse(
        events(),
        ping=15,
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no", "X-Arca-Run": stream.id},
    )
