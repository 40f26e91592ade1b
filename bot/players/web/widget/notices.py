"""`GET /api/notices?lang=ko|en`: the notices of the open incidents whose scope covers the caller (a
player by the token's id; an anonymous visitor only those for all players), in the widget's language,
for the banner above the conversation. `GET /api/notices/stream` pushes the same list as a `notices`
event at once and again whenever it changes (`NoticeWatch`: within about a second, whichever process
declared, updated or closed the incident); the widget polls every `poll` seconds only as a fallback."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from sse_starlette import ServerSentEvent

from bot.incidents.notice import open_incidents
from bot.players.web.widget.callers import resolve_caller, set_visitor_cookie
from bot.players.web.widget.notice_watch import NoticeWatch
from bot.store import Store
from bot.web_kit.deps import deps_of
from bot.web_kit.sse.response import sse_response

POLL_SECONDS = 20.0
"""How often the widget asks for the notices when its stream is down (the response says it)."""
ALIVE_SECONDS = 15.0
"""A stream with no change checks this often that its client is still there."""


async def _notices(store: Store, player_id: str | None, lang: str) -> list[dict[str, Any]]:
    return [
        {"id": i.id, "version": i.notice_version, "lang": lang, "text": i.notice(lang)}
        for i in await open_incidents(store, player_id)
    ]


def notices_router() -> APIRouter:
    router = APIRouter(prefix="/api")

    @router.get("/notices")
    async def notices(request: Request) -> Response:
        deps = deps_of(request)
        caller = resolve_caller(request)
        lang = "en" if request.query_params.get("lang") == "en" else "ko"
        found = await _notices(deps.conversations.store, caller.identity.player_id, lang)
        response = JSONResponse(
            {"notices": found, "poll": POLL_SECONDS}, headers={"Cache-Control": "no-store"}
        )
        set_visitor_cookie(response, caller, deps)
        return response

    @router.get("/notices/stream")
    async def notices_stream(request: Request) -> Response:
        store = deps_of(request).conversations.store
        player_id = resolve_caller(request).identity.player_id
        lang = "en" if request.query_params.get("lang") == "en" else "ko"
        watch: NoticeWatch = request.app.state.notice_watch

        async def events() -> AsyncIterator[ServerSentEvent]:
            known: int | None = watch.version  # read before the notices: a change meanwhile wakes us
            sent = None
            while known is not None:
                found = await _notices(store, player_id, lang)
                if found != sent:
                    sent = found
                    yield ServerSentEvent(data=json.dumps({"notices": found}), event="notices")
                while (now := await watch.next_change(known, within=ALIVE_SECONDS)) == known:
                    if await request.is_disconnected():
                        return
                known = now

        return sse_response(events(), headers={"Cache-Control": "no-store"})

    return router
