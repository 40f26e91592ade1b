"""`POST /game/v1/events` (DESIGN.md §11.3): the game's signed events, on the web server when
`ARCA_GAME_WEBHOOK_SECRET` is set (otherwise the route does not exist: 404).

Machine to machine: no staff session, no CSRF check and no player identity — the signature is the only
credential, checked before the body is read as JSON. The body limit (1 MiB) is `BodyLimit`'s.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse

from bot.game.events import SIGNATURE_HEADER, EventReceiver

EVENTS_PATH = "/game/v1/events"


def install(app: FastAPI) -> None:
    """Add the events route when the webhook secret is set; its receiver is `app.state.game_events`.

    After an `order.upserted` event commits, the receiver calls `WebDeps.forget_order` — the order
    source's `forget(order_id)`, wired by whoever builds the deps (None: nothing cached to drop)."""
    deps = app.state.web
    if not deps.game_webhook_secrets:
        app.state.game_events = None
        return
    app.state.game_events = EventReceiver(
        deps.conversations.store,
        deps.game_webhook_secrets,
        forget_order=deps.forget_order,
        clock=deps.conversations.clock,
    )
    app.include_router(events_router())


def events_router() -> APIRouter:
    router = APIRouter()

    @router.post(EVENTS_PATH, include_in_schema=False)
    async def game_event(request: Request) -> JSONResponse:
        receiver: EventReceiver = request.app.state.game_events
        body = await request.body()  # the raw bytes: the signature covers them exactly
        source = request.client.host if request.client is not None else "unknown"
        answer = await receiver.receive(body, request.headers.get(SIGNATURE_HEADER), source)
        return JSONResponse(answer.body, answer.status, headers=answer.headers)

    return router
