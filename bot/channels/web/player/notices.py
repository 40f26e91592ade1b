"""`GET /api/notices?lang=ko|en`: the notices of the open incidents whose scope covers the caller (a
player by the token's id; an anonymous visitor only those for all players), in the widget's language,
for the banner above the conversation. The widget asks again every `poll` seconds, so an update shows and
a closed incident's banner goes within that time."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from bot.channels.web.deps import deps_of
from bot.channels.web.player.callers import resolve_caller, set_visitor_cookie
from bot.incidents.notice import open_incidents

POLL_SECONDS = 20.0
"""How often the widget asks for the notices (the response says it, so a deployment can change it)."""


def notices_router() -> APIRouter:
    router = APIRouter(prefix="/api")

    @router.get("/notices")
    async def notices(request: Request) -> Response:
        deps = deps_of(request)
        caller = resolve_caller(request)
        lang = "en" if request.query_params.get("lang") == "en" else "ko"
        found = await open_incidents(deps.conversations.store, caller.identity.player_id)
        response = JSONResponse(
            {
                "notices": [
                    {"id": i.id, "version": i.notice_version, "lang": lang, "text": i.notice(lang)}
                    for i in found
                ],
                "poll": POLL_SECONDS,
            },
            headers={"Cache-Control": "no-store"},
        )
        set_visitor_cookie(response, caller, deps)
        return response

    return router
