"""The widget's page: `GET /` serves the chat widget, embeddable by the allowed origins, and its static
files, which the one web server (`bot.serving.web.app`) mounts at `/static`."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, Response

from bot.web_kit.deps import deps_of


def static_dir() -> Traversable:
    """The widget's static files (`index.html`, the scripts), served under `/static`."""
    return resources.files("bot.players.web.widget") / "static"


def page_router() -> APIRouter:
    """`GET /`: the widget's page, never cached, embeddable in an iframe by the allowed origins."""
    router = APIRouter()

    @router.get("/", include_in_schema=False)
    async def index(request: Request) -> Response:
        response = FileResponse(str(static_dir() / "index.html"), media_type="text/html; charset=utf-8")
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

    return router
