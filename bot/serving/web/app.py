"""The one web server's HTTP app, carrying both rooms: the players' widget (its page `GET /`) and chat API
streaming seed 000's SSE events (`bot.players.web`), the staff console under `/staff`
(`bot.staffroom.console`), the game's signed events, and the probes `/healthz`, `/livez` and `/readyz`.

`create_app(deps)` builds a FastAPI app from its collaborators (`WebDeps`, `bot.web_kit.deps`); later
features add their routers to the returned app (`app.include_router(...)`) and read the same `app.state.web`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles

from bot.players.web.sse.outbox import web_outbox
from bot.players.web.sse.registry import StreamRegistry
from bot.players.web.widget.attachments import attachments_router, upload_sweep
from bot.players.web.widget.callers import Caller, resolve_caller
from bot.players.web.widget.chat import chat_router
from bot.players.web.widget.feedback import feedback_router
from bot.players.web.widget.limits import ByteBudget, SlidingWindowLimiter, WebLimits
from bot.players.web.widget.notice_watch import NoticeWatch
from bot.players.web.widget.notices import notices_router
from bot.players.web.widget.page import page_router, static_dir
from bot.serving.web.game_events import install as install_game_events
from bot.staffroom.console import install as install_staff_console
from bot.staffroom.console.incident_runs import CompensationResumer
from bot.web_kit.body_limits import BodyLimit
from bot.web_kit.deps import WebDeps, WebError, deps_of
from bot.web_kit.readiness import database_probe, index_probe, run_checks

__all__ = ["Caller", "WebDeps", "WebError", "create_app", "deps_of", "resolve_caller"]


def create_app(deps: WebDeps) -> FastAPI:
    """The web channel's FastAPI app. `app.state.web` is `deps`; `app.state.streams` the stream registry."""
    app = FastAPI(title="Arca support web channel", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.web = deps
    app.state.streams = StreamRegistry(deps.clock)
    app.state.staff_forms_sent = OrderedDict()  # staff reply forms already sent (staff/pages.claim_form)
    app.state.outbox = web_outbox(app)  # started and stopped with the server (`WebServer`)
    app.state.incident_resumer = CompensationResumer(app)  # started and stopped with the server
    app.state.notice_watch = NoticeWatch(
        deps.conversations.store
    )  # the banner's pushes; stopped with the server
    app.state.limits = WebLimits(
        identity=SlidingWindowLimiter(deps.rate_limit, deps.rate_window, clock=deps.clock),
        address=SlidingWindowLimiter(deps.rate_limit_ip, deps.rate_window, clock=deps.clock),
        signed_address=SlidingWindowLimiter(deps.rate_limit_ip_signed, deps.rate_window, clock=deps.clock),
        upload_bytes=ByteBudget(
            deps.attachment_address_bytes,
            deps.conversations.attachments.unsent_ttl.total_seconds(),
            clock=deps.clock,
        ),
    )
    app.state.upload_sweep = upload_sweep(deps.conversations.attachments)  # started with the server
    # A request without a cookie is a new visitor: capped per address, or dropping the cookie would
    # reset the per-identity limit.
    app.state.new_visitors = SlidingWindowLimiter(deps.new_visitors_ip, deps.rate_window, clock=deps.clock)
    # Before any route reads a body (inside CORS, so an embedding page can read the 413).
    app.add_middleware(
        BodyLimit,
        chat_cap=deps.max_message_chars * 4 + 4_096,
        upload_cap=deps.conversations.attachments.max_bytes,
    )
    if deps.origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=deps.origins,
            allow_credentials=True,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID", "X-Arca-Request"],
            expose_headers=["Retry-After"],
        )

    @app.exception_handler(WebError)
    async def web_error(request: Request, exc: WebError) -> JSONResponse:
        return JSONResponse(
            {"error": exc.code, "message": exc.message, **exc.extra},
            status_code=exc.status,
            headers=exc.headers,
        )

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # Never pydantic's details (they quote the input): the API's error shape, one plain sentence.
        return JSONResponse({"error": "invalid_request", "message": "The request is not valid."}, 400)

    app.include_router(page_router())  # the widget's page, `GET /`
    app.include_router(probes_router())
    app.include_router(chat_router())
    app.include_router(feedback_router())
    app.include_router(notices_router())
    app.include_router(attachments_router())
    install_staff_console(app)
    install_game_events(app)  # `POST /game/v1/events`, when ARCA_GAME_WEBHOOK_SECRET is set
    app.mount("/static", StaticFiles(directory=str(static_dir())), name="static")
    return app


def probes_router() -> APIRouter:
    """The operator's probes: `/healthz` (what is loaded), `/livez` (the loop answers), `/readyz`."""
    router = APIRouter()

    @router.get("/healthz")
    async def healthz(request: Request) -> dict[str, Any]:
        deps = deps_of(request)
        return {"status": "ok", "llm": deps.llm_ready, "policy_index": deps.index_state()}

    @router.get("/livez")
    async def livez() -> dict[str, str]:
        # Alive = the event loop answers; nothing outside the process is asked, so a database outage
        # never makes an orchestrator restart a healthy process.
        return {"status": "ok"}

    @router.get("/readyz")
    async def readyz(request: Request) -> JSONResponse:
        deps = deps_of(request)
        checks = {
            "database": database_probe(deps.conversations.store),
            "policy_index": index_probe(deps.index_state),
        }
        if deps.game_ready is not None:
            checks["game_backend"] = deps.game_ready
        results = await run_checks(checks)
        ready = all(r == "ok" for r in results.values())
        return JSONResponse(
            {"status": "ready" if ready else "not_ready", "checks": results},
            status_code=200 if ready else 503,
            headers={"Cache-Control": "no-store"},
        )

    return router
