"""Live updates of the staff console over Server-Sent Events (sse-starlette, as the chat API uses).

The conversation list and an open conversation are read from the store, so threads of every channel and
every process (Discord shards) show up: one shared `Watch` per watched thing (not one per browser)
recomputes it every `interval` seconds while someone watches, and pushes each change to every watcher.
An open conversation also gets the seed-000 events of a run in progress in this process: a web run's are
the same guarded events its player receives; a Discord or console run's come from the `RunEvents` hub of
`Conversations` in the same shape (`run_feed`), so the page draws both alike. Every stream needs the staff session when it opens and ends when the
session is revoked or times out (watching is not activity: it does not keep a session alive).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sse_starlette import ServerSentEvent

from bot.staffroom.console import auth, queries
from bot.staffroom.console.auth import SESSION_COOKIE
from bot.staffroom.console.pages import (
    THREAD_ID,
    conversations_of,
    lang_of,
    list_position,
    render,
    render_html,
    require_user,
    with_console_headers,
    zone_of,
)
from bot.staffroom.console.run_feed import hub_runs
from bot.store import Store
from bot.store.outbox import reply_statuses
from bot.web_kit.sse.response import sse_response

log = logging.getLogger(__name__)

LIST_INTERVAL = 0.5
"""Seconds between two reads of the conversation list (one read per process, however many watch)."""
RUN_LOOKUP_INTERVAL = 0.1
"""Seconds between two looks for a web run starting on an open conversation (an in-memory lookup)."""
SESSION_CHECK_INTERVAL = 10.0
"""A live stream ends within this many seconds of its session being revoked or timing out."""
_UNSET = object()


class Watch:
    """A value recomputed every `interval` s while someone follows it; followers get each new value."""

    def __init__(
        self, compute: Callable[[], Awaitable[Any]], interval: float, on_idle: Callable[[], None]
    ) -> None:
        self.compute = compute
        self.interval = interval
        self.on_idle = on_idle
        self.value: Any = _UNSET
        self.version = 0
        self._followers = 0
        self._task: asyncio.Task[None] | None = None
        self._wakeup = asyncio.Event()

    async def _run(self) -> None:
        while True:
            try:
                value = await self.compute()
            except Exception:  # the store may be briefly unavailable: keep the last value, retry
                log.exception("staff console: a live read failed")
            else:
                if value != self.value:
                    self.value = value
                    self.version += 1
                    self._wakeup.set()
                    self._wakeup = asyncio.Event()
            await asyncio.sleep(self.interval)

    async def follow(self) -> AsyncIterator[Any]:
        """The current value (once computed), then each change, until the caller stops iterating."""
        self._followers += 1
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="staff-console-watch")
        try:
            seen = 0
            while True:
                if self.version != seen:
                    seen = self.version
                    yield self.value
                    continue
                await self._wakeup.wait()
        finally:
            self._followers -= 1
            if self._followers == 0:
                task, self._task = self._task, None
                if task is not None:
                    task.cancel()
                self.on_idle()


class LiveHub:
    """The watches of one app, by key; a watch nobody follows any more is dropped."""

    def __init__(self) -> None:
        self.watches: dict[str, Watch] = {}

    def watch(self, key: str, compute: Callable[[], Awaitable[Any]], interval: float) -> Watch:
        found = self.watches.get(key)
        if found is None:
            found = self.watches[key] = Watch(compute, interval, lambda: self.watches.pop(key, None))
        return found


def hub_of(request: Request) -> LiveHub:
    state = request.app.state
    hub = getattr(state, "staff_live", None)
    if hub is None:
        hub = state.staff_live = LiveHub()
    return hub


async def _merge(*sources: AsyncIterator[tuple[str, Any]]) -> AsyncIterator[tuple[str, Any]]:
    """Items of several async iterators as they come; ends when any of them ends."""
    queue: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()

    async def pump(source: AsyncIterator[tuple[str, Any]]) -> None:
        try:
            async for item in source:
                await queue.put(item)
        finally:
            await queue.put(None)

    tasks = [asyncio.create_task(pump(s)) for s in sources]
    try:
        while (item := await queue.get()) is not None:
            yield item
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _while_signed_in(store: Store, cookie: str | None) -> AsyncIterator[tuple[str, Any]]:
    """Yields nothing; ends (and so ends the stream) once the session no longer stands."""
    while True:
        if not await auth.session_active(store, cookie):
            return
        await asyncio.sleep(SESSION_CHECK_INTERVAL)
        yield "check", None  # nothing to send: the stream skips it


async def _tagged(tag: str, source: AsyncIterator[Any]) -> AsyncIterator[tuple[str, Any]]:
    async for value in source:
        yield tag, value


async def _web_runs(request: Request, thread_id: str) -> AsyncIterator[tuple[str, Any]]:
    """The events of each web run of the thread in this process, from the start of the run."""
    streams = request.app.state.streams
    seen: str | None = None
    while True:
        stream = streams.open_stream(thread_id)
        if stream is None or stream.id == seen:
            await asyncio.sleep(RUN_LOOKUP_INTERVAL)
            continue
        seen = stream.id
        async for event in stream.follow(0):
            yield "run", {"id": event.id, "channel": event.channel, "payload": event.payload}


def _sse(events: AsyncIterator[ServerSentEvent]) -> Response:
    return with_console_headers(sse_response(events))


def add_live_routes(router: APIRouter) -> None:
    """`GET /staff/conversations/live` and `GET /staff/conversations/{thread}/live` (before the pages)."""

    @router.get("/conversations/live")
    async def conversations_live(request: Request) -> Response:
        user = await require_user(request)
        conv = conversations_of(request)
        lang, zone, path = lang_of(request), zone_of(request), "/staff/conversations"
        page, search = list_position(request)
        watch = hub_of(request).watch(
            f"list:{page}:{search}",
            lambda: queries.conversation_rows(conv, page=page, search=search),
            LIST_INTERVAL,
        )
        cookie = request.cookies.get(SESSION_COOKIE)

        async def events() -> AsyncIterator[ServerSentEvent]:
            async for kind, rows in _merge(
                _tagged("rows", watch.follow()), _while_signed_in(conv.store, cookie)
            ):
                if kind != "rows":
                    continue
                html = render_html(
                    "conversation_rows.html", lang=lang, zone=zone, user=user, path=path, rows=rows
                )
                yield ServerSentEvent(data=html, event="rows")

        return _sse(events())

    @router.get("/conversations/{thread_id}/live")
    async def conversation_live(thread_id: str, request: Request) -> Response:
        user = await require_user(request)
        if not THREAD_ID.match(thread_id):
            return render(request, "message.html", user, status=400, text="bad request")
        conv = conversations_of(request)
        lang, zone, path = lang_of(request), zone_of(request), f"/staff/conversations/{thread_id}"
        watch = hub_of(request).watch(
            f"thread:{thread_id}", lambda: queries.thread_signature(conv, thread_id), LIST_INTERVAL
        )
        cookie = request.cookies.get(SESSION_COOKIE)

        async def events() -> AsyncIterator[ServerSentEvent]:
            sources = (
                _tagged("thread", watch.follow()),
                _web_runs(request, thread_id),
                hub_runs(
                    conv,
                    thread_id,
                    lambda: request.app.state.streams.open_stream(thread_id) is not None,
                ),
                _while_signed_in(conv.store, cookie),
            )
            async for kind, value in _merge(*sources):
                if kind == "run":
                    yield ServerSentEvent(data=json.dumps(value, ensure_ascii=False), event="run")
                if kind != "thread":
                    continue
                messages = await queries.history(conv.store, thread_id)
                facts = await queries.withheld_facts(conv.store, thread_id)
                html = render_html(
                    "history.html",
                    lang=lang,
                    zone=zone,
                    user=user,
                    path=path,
                    messages=messages,
                    facts=facts,
                    earlier=await queries.earlier_messages(conv.store, thread_id, len(messages)),
                )
                yield ServerSentEvent(data=html, event="history")
                replies = await reply_statuses(conv.store, thread_id)
                html = render_html(
                    "deliveries.html", lang=lang, zone=zone, user=user, path=path, replies=replies
                )
                yield ServerSentEvent(data=html, event="deliveries")
                state = {"running": value.running, "handed_off": value.handed_off}
                yield ServerSentEvent(data=json.dumps(state), event="state")

        return _sse(events())
