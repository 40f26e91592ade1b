"""Reading the API's JSON bodies, and who may send them: one clear 4xx for each way a body is wrong
(never a 500), and state changes refused when a page of another site sends them.

A browser sends a cross-site POST without asking first only when it is a "simple" request
(`text/plain`, forms) and without custom headers. So a state change needs `Content-Type:
application/json` exactly (parameters allowed) and, from a browser, either the widget's `X-Arca-Request`
header (a cross-site page cannot add it without a CORS preflight the server refuses) or an `Origin` the
server allows (its own, or one of `ARCA_WEB_ORIGINS`). A client that is no browser sends no `Origin`
and carries no visitor's cookies to abuse.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from bot.web_kit.deps import WebError, deps_of

REQUEST_HEADER = "X-Arca-Request"
"""The widget's header on every state change (any value)."""


def media_type(request: Request) -> str:
    """`application/json` of `Application/JSON; charset=utf-8`; '' without a Content-Type."""
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def check_same_site(request: Request) -> None:
    """Refuse (403) a state change a page of another site sent from a visitor's browser."""
    if request.headers.get(REQUEST_HEADER) is not None:
        return
    origin = request.headers.get("origin")
    if origin is None:
        return  # not a browser
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    if origin == own or origin in deps_of(request).origins:
        return
    raise WebError(403, "cross_site", f"Requests from another site need the {REQUEST_HEADER} header.")


async def read_json_object(request: Request, usage: str) -> dict[str, Any]:
    """The body as a JSON object; 415 / 400 with `usage` (an example body) for anything else."""
    check_same_site(request)
    if media_type(request) != "application/json":
        raise WebError(415, "unsupported_media_type", f"Send JSON: Content-Type: application/json, {usage}")
    raw = await request.body()  # capped before the route (`BodyLimit`)
    try:
        data = json.loads(raw.decode("utf-8"))
        # A lone surrogate ("\udfff") parses but can be neither stored nor sent back; PostgreSQL
        # refuses a NUL character in text.
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeError:
        raise WebError(400, "invalid_json", "The body is not valid UTF-8 text.") from None
    except json.JSONDecodeError as exc:
        raise WebError(400, "invalid_json", f"The body is not valid JSON ({exc}).") from None
    except (ValueError, RecursionError):  # a 5,000-digit number, nesting deeper than Python recurses
        raise WebError(400, "invalid_json", "The body holds a number or nesting too large to read.") from None
    if _has_nul(data):
        raise WebError(400, "invalid_request", "Text may not contain NUL characters.")
    if not isinstance(data, dict):
        raise WebError(400, "invalid_request", f"The body must be a JSON object: {usage}")
    return data


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False
