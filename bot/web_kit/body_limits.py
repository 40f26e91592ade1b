"""A size cap on every request body, applied before any route reads it (an ASGI middleware).

The body is read here, up to the route's cap, and handed on: a 100 MB sign-in form or feedback vote is
answered 413 after at most the cap (at once when `Content-Length` says so), and a client that goes away
half-way is dropped with one log line instead of a traceback from deep inside the route.
Written by hand: Starlette has no per-route body limit, and the ASGI contract makes it twenty lines.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]

DEFAULT_CAP = 16 * 1024
"""Bytes of any body the routes below do not name (feedback votes, unknown paths)."""
STAFF_CAP = 64 * 1024
"""The console's forms: a staff reply, a revoke reason."""
LOGIN_CAP = 4 * 1024
"""`POST /staff/login` carries a link token and the page's token."""
INCIDENT_FORM_PATH = "/staff/incidents"
INCIDENT_FORM_CAP = 4 * 1024 * 1024
"""The incident declare form may carry a CSV of players (about 150,000 ids; the page checks it first)."""
_WITH_BODY = {"POST", "PUT", "PATCH", "DELETE"}


EVENTS_PATH = "/game/v1/events"
EVENTS_CAP = 1024 * 1024
"""The game's signed events (DESIGN.md §11.3): 1 MiB."""

UPLOAD_PATH = "/api/attachments"
"""A widget file upload: its cap is the attachment size limit (`ARCA_ATTACHMENT_MAX_BYTES`)."""


def body_cap(path: str, chat_cap: int, upload_cap: int = DEFAULT_CAP) -> int:
    """The largest body (bytes) a request to `path` may send."""
    if path == "/api/chat":
        return chat_cap
    if path == UPLOAD_PATH:
        return upload_cap
    if path == "/staff/login":
        return LOGIN_CAP
    if path == EVENTS_PATH:
        return EVENTS_CAP
    if path == INCIDENT_FORM_PATH:
        return INCIDENT_FORM_CAP
    if path.startswith("/staff"):
        return STAFF_CAP
    return DEFAULT_CAP


class BodyLimit:
    """Reads each request body up to its cap before the app sees it; 413 past the cap."""

    def __init__(self, app: Any, chat_cap: int, upload_cap: int = DEFAULT_CAP) -> None:
        self.app = app
        self.chat_cap = chat_cap
        self.upload_cap = upload_cap

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        cap = body_cap(path, self.chat_cap, self.upload_cap)
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > cap:
            await _too_large(scope, cap, send)
            return
        if scope.get("method") not in _WITH_BODY:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                # A half-sent body: nobody is left to answer.
                log.info("a client went away before sending the whole request body (%s)", path)
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > cap:
                await _too_large(scope, cap, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()  # after the body: `http.disconnect` for the SSE routes' watchers

        await self.app(scope, replay, send)


def _staff_lang(scope: Scope) -> str:
    """The console's language cookie (`arca_staff_lang`), read from the raw header: Korean unless it says en."""
    cookies = dict(scope.get("headers") or []).get(b"cookie", b"").decode("latin-1")
    return "en" if re.search(r"(?:^|;\s*)arca_staff_lang=en(?:;|$)", cookies) else "ko"


def _staff_too_large(scope: Scope, cap: int) -> bytes:
    """A page in the staff member's language; the browser's Back returns to the form as it was typed."""
    size = f"{cap / (1024 * 1024):.0f} MB" if cap >= 1024 * 1024 else f"{cap // 1024} KB"
    if _staff_lang(scope) == "en":
        lang, title = "en", "The form is too large"
        text = (
            f"What was sent is larger than {size}. Go back with the browser's Back button: what you typed "
            "is still in the form. Shorten it (split a CSV of players into parts) and send it again."
        )
    else:
        lang, title = "ko", "입력한 내용이 너무 큽니다"
        text = (
            f"보낸 내용이 {size}보다 큽니다. 브라우저의 뒤로 가기를 누르면 입력한 내용이 그대로 있습니다. "
            "내용을 줄여(플레이어 CSV는 나누어) 다시 보내 주세요."
        )
    return (
        f'<!doctype html><html lang="{lang}"><meta charset="utf-8"><title>{title}</title>'
        f'<link rel="stylesheet" href="/staff/login/staff.css"><main class="card"><h1>{title}</h1>'
        f"<p>{text}</p></main></html>"
    ).encode()


async def _too_large(scope: Scope, cap: int, send: Send) -> None:
    path = scope.get("path", "")
    if path.startswith("/staff"):
        body = _staff_too_large(scope, cap)
        media = b"text/html; charset=utf-8"
    elif path == UPLOAD_PATH:  # the widget shows this sentence to the player
        limit = f"{cap / (1024 * 1024):.1f} MB"
        message = f"첨부 파일이 너무 큽니다(최대 {limit}). / The file is larger than the {limit} limit."
        body = json.dumps({"error": "attachment_refused", "code": "too_large", "message": message}).encode()
        media = b"application/json"
    else:
        body = json.dumps(
            {"error": "body_too_large", "message": f"The request body is larger than {cap:,} bytes."}
        ).encode()
        media = b"application/json"
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", media),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
