"""The chat API under `/api`: seed 000's SSE stream for a message, joining a running stream as an
interrupt, thread history and resumption with `Last-Event-ID`."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field, ValidationError
from sse_starlette import EventSourceResponse, ServerSentEvent

from bot.attachments.texts import split_model_notes
from bot.conversations import Incoming
from bot.guards.input import check_input
from bot.guards.output import OutputGuard
from bot.players.web.sse.registry import StreamRegistry
from bot.players.web.sse.stream import RunStream, WebSurface
from bot.players.web.widget.attachments import owned_attachments
from bot.players.web.widget.callers import client_address, identity_json, resolve_caller, set_visitor_cookie
from bot.players.web.widget.limits import WebLimits, check_all
from bot.store.outbox import staff_names
from bot.vocabulary.interrupt import INTERRUPT_PREFIX
from bot.vocabulary.language import detect_language
from bot.web_kit.deps import WebDeps, WebError, deps_of
from bot.web_kit.json_body import read_json_object
from bot.web_kit.sse.response import sse_response
from bot.yaml_files import first_error

log = logging.getLogger(__name__)

MAX_WAIT = 30.0
"""Seconds `GET /api/threads/{thread}/events?wait=` waits at most for a stream to start."""
CURSOR_HEADER = "X-Arca-Cursor"
"""The number of the latest stream a response covers (see `StreamRegistry`); `?after=` names it back."""
THREAD_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
HISTORY_LIMIT = 200
NO_LLM_PLAYER_MESSAGE = (
    "지금은 답변할 수 없어요. 잠시 후 다시 시도하시거나 상담원 연결을 요청해 주세요. / "
    "We can't answer right now. Please try again later or ask to be put through to our support team."
)


class ChatRequest(BaseModel):
    thread: str = Field(
        pattern=THREAD_PATTERN, description="The conversation's name on this page, e.g. `main`."
    )
    message: str = Field(description="What the player wrote.")
    attachments: list[str] = Field(
        default_factory=list, max_length=10, description="Ids of files uploaded to `/api/attachments`."
    )


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
                "message": None if deps.llm_ready else NO_LLM_PLAYER_MESSAGE,
                "debug": deps.debug_view,
                "identity": identity_json(caller.identity),
                "max_message_chars": deps.max_message_chars,
                "max_attachment_bytes": deps.conversations.attachments.max_bytes,
            }
        )
        set_visitor_cookie(response, caller, deps)
        return response

    @router.post("/chat")
    async def chat(request: Request) -> Response:
        deps = deps_of(request)
        if not deps.llm_ready:
            raise WebError(503, "llm_not_configured", NO_LLM_PLAYER_MESSAGE)
        caller = resolve_caller(request)
        body = await _read_chat_request(request, deps)
        verdict = check_input(body.message, max_chars=deps.max_message_chars)
        if verdict.reason_code == "too_long":
            raise WebError(413, "message_too_long", verdict.reply, limit=deps.max_message_chars)
        if not body.message.strip() and not body.attachments:
            raise WebError(400, "empty_message", "The message is empty.")
        files = await owned_attachments(deps.conversations.attachments, caller, body.attachments)
        ip = client_address(request)
        limits: WebLimits = request.app.state.limits
        wait = check_all(limits.of(caller.identity.kind, caller.identity.key, ip))
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
        incoming = Incoming(
            thread_id, caller.actor, body.message, ref=None, verdict=verdict, attachments=list(files)
        )
        conversations = deps.conversations
        guard = await OutputGuard.for_actor(
            conversations.store,
            caller.actor,
            thread_id=thread_id,
            locale=detect_language(body.message),
            protected_texts=[conversations.system_prompt],
        )
        # No await from here on: two POSTs to one thread cannot both open a stream.
        stream = streams.open_stream(thread_id)
        if stream is not None and stream.joinable:
            _drive(deps, streams, stream, incoming)
            response: Response = JSONResponse({"joined": stream.id}, status_code=202)
        else:
            stream = RunStream(deps.new_id(), thread_id, clock=deps.clock)
            stream.surface = WebSurface(
                stream,
                guard=guard,
                protected_texts=[conversations.system_prompt],
                tools=conversations.tools,
                clock=deps.clock,
            )
            streams.add(stream)
            _drive(deps, streams, stream, incoming)
            response = _sse(stream, 0)
        set_visitor_cookie(response, caller, deps)
        return response

    @router.get("/threads/{thread}")
    async def history(thread: str, request: Request) -> Response:
        """The thread's messages as the player saw them; 404 for a thread this identity never wrote in."""
        deps = deps_of(request)
        caller = resolve_caller(request)
        check_thread_name(thread)
        thread_id = caller.identity.thread_id(thread)
        rows = await deps.conversations.memory.recent(thread_id, limit=HISTORY_LIMIT)
        stream = request.app.state.streams.open_stream(thread_id)
        cursor = {CURSOR_HEADER: str(request.app.state.streams.seq)}
        if not rows and stream is None:
            raise WebError(404, "thread_not_found", "No such conversation.", headers=cursor)
        staff_of = {row.id: row.name.removeprefix(STAFF_PREFIX) for row in rows if _by_staff(row)}
        names = await staff_names(deps.conversations.store, set(staff_of.values()))
        messages = []
        for row in rows:
            content = row.content or ""
            if row.role == "user" and content.startswith(INTERRUPT_PREFIX):
                content = content[len(INTERRUPT_PREFIX) :].strip()
            files: list[str] = []
            if row.role == "user":  # the player's words; the model's notes on their files become `files`
                content, files = split_model_notes(content)
            message: dict[str, Any] = {
                "role": row.role,
                "content": content,
                "at": row.created_at.isoformat() if row.created_at else None,
            }
            if row.role == "user":
                message["files"] = files
            if row.role == "assistant":
                message["run"] = row.run_id  # what the widget's 👍 / 👎 on this answer names
                message["by"] = "staff" if row.id in staff_of else "bot"
                message["staff_name"] = names.get(staff_of[row.id]) if row.id in staff_of else None
            messages.append(message)
        response = JSONResponse(
            {
                "thread": thread,
                "running": stream is not None,
                "run": stream.id if stream is not None else None,
                "messages": messages,
            },
            headers=cursor,  # what the history holds: a later wait asks for streams after it
        )
        set_visitor_cookie(response, caller, deps)
        return response

    @router.get("/threads/{thread}/events")
    async def resume(thread: str, request: Request) -> Response:
        """Reconnect to a thread's stream: events after `Last-Event-ID`, then live ones; 204 when none runs.

        With `wait=S`, a client between runs waits up to S s for the thread's next stream (until it goes
        away); with `after=N` (its last `X-Arca-Cursor`) it first gets a stream it has not seen that
        started after stream N, even one that already ended."""
        caller = resolve_caller(request)
        check_thread_name(thread)
        thread_id = caller.identity.thread_id(thread)
        streams: StreamRegistry = request.app.state.streams
        last = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
        stream = None
        after = 0
        if last and re.fullmatch(r"[A-Za-z0-9_-]{1,64}-[0-9]{1,9}", last):  # else: not one of our ids
            stream = streams.find(thread_id, last.rpartition("-")[0])
            if stream is not None:
                after = stream.seq_of(last)
        seen = request.query_params.get("after", "")
        if stream is None and re.fullmatch(r"[0-9]{1,15}", seen):
            stream = streams.next_after(thread_id, int(seen))
        if stream is None:
            stream = streams.open_stream(thread_id)
        wait = request.query_params.get("wait", "")
        if stream is None and re.fullmatch(r"[0-9]{1,6}(\.[0-9]{0,6})?", wait):
            # Between runs, a client may wait for the thread's next stream (a staff reply, another tab).
            stream = await _unless_gone(request, streams.wait_stream(thread_id, min(float(wait), MAX_WAIT)))
        if stream is None:
            return Response(status_code=204, headers={CURSOR_HEADER: str(streams.seq)})
        return _sse(stream, after)

    return router


async def _unless_gone(request: Request, waiting: Awaitable[RunStream | None]) -> RunStream | None:
    """What `waiting` gives, or None as soon as the client disconnects (a closed page waits for nothing)."""
    task = asyncio.ensure_future(waiting)
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pending in (task, gone):
            pending.cancel()
    return task.result() if task.done() and not task.cancelled() else None


async def _disconnected(request: Request) -> None:
    """Returns once the client has gone (the server reads `http.disconnect`)."""
    message = await request.receive()
    while message["type"] != "http.disconnect":
        message = await request.receive()


STAFF_PREFIX = "staff:"
"""The `name` of a staff reply's history row (`staff:<staff_id>`, written by the console)."""


def _by_staff(row: Any) -> bool:
    return row.role == "assistant" and (row.name or "").startswith(STAFF_PREFIX)


def check_thread_name(thread: str) -> None:
    if not re.fullmatch(THREAD_PATTERN, thread):
        raise WebError(400, "invalid_request", "thread: 1-64 letters, digits, _ or -.")


async def _read_chat_request(request: Request, deps: WebDeps) -> ChatRequest:
    """The JSON body, with one clear error for each way it can be wrong."""
    data = await read_json_object(request, '{"thread": "main", "message": "..."}')
    try:
        return ChatRequest.model_validate(data)
    except ValidationError as exc:
        loc, msg = first_error(exc)
        where = ".".join(str(p) for p in loc) or "body"
        hint = "1-64 letters, digits, _ or -" if where == "thread" else msg
        raise WebError(400, "invalid_request", f"{where}: {hint}.", field=where) from None


def _drive(deps: WebDeps, streams: StreamRegistry, stream: RunStream, incoming: Incoming) -> None:
    """Hand the message to `Conversations` in a task of its own: the run outlives the HTTP request."""

    async def handle() -> None:
        outcome = await deps.conversations.handle(incoming, stream.surface)
        if outcome.kind == "paused":  # staff have the conversation: say so, and the stream ends with `done`
            stream.surface.acknowledge_handoff(detect_language(incoming.text))

    task = asyncio.get_running_loop().create_task(handle())

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

    return sse_response(
        events(),
        headers={"Cache-Control": "no-store", "X-Arca-Run": stream.id, CURSOR_HEADER: str(stream.seq)},
    )
