"""The widget's files: `POST /api/attachments` takes one file as the raw request body (checked by content
and kept, or refused with a sentence in the player's language), the message then names the kept ids
(`/api/chat`'s `attachments`), and `GET /api/attachments/ID` gives a file back to its uploader only."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from bot.attachments import AttachmentBox, Refusal, StoredAttachment, Upload
from bot.attachments.box import clean_name
from bot.attachments.texts import refusal_text
from bot.periodic import Periodic
from bot.players.web.widget.callers import Caller, client_address, resolve_caller, set_visitor_cookie
from bot.players.web.widget.limits import WebLimits, check_all
from bot.web_kit.attachment_response import attachment_response
from bot.web_kit.deps import WebError, deps_of
from bot.web_kit.json_body import check_same_site

log = logging.getLogger(__name__)


REFUSAL_STATUS = {"too_large": 413, "too_many_pixels": 413, "quota": 429, "address_quota": 429}
SWEEP_EVERY = 300.0
"""Seconds between two sweeps of unsent uploads (`AttachmentBox.sweep`)."""


def upload_sweep(box: AttachmentBox) -> Periodic:
    """Deletes uploads no message took in time, every `SWEEP_EVERY` s while the web server runs."""
    return Periodic(
        box.sweep, SWEEP_EVERY, name="attachment-sweep", log=log, failure="the sweep of unsent uploads failed"
    )


def attachments_router() -> APIRouter:
    router = APIRouter(prefix="/api")

    @router.post("/attachments")
    async def upload(request: Request) -> Response:
        deps = deps_of(request)
        check_same_site(request)  # another site's page cannot upload into a visitor's files
        caller = resolve_caller(request)
        limits: WebLimits = request.app.state.limits
        address = client_address(request)
        wait = check_all(limits.of(caller.identity.kind, caller.identity.key, address))
        if wait:
            raise WebError(429, "rate_limited", "Too many requests.", headers={"Retry-After": str(wait)})
        name = request.query_params.get("name", "")[:300] or "file"
        locale = "en" if request.query_params.get("lang") == "en" else "ko"
        box: AttachmentBox = deps.conversations.attachments
        data = await request.body()
        got: StoredAttachment | Refusal
        budget = limits.upload_bytes
        if caller.identity.kind == "anon" and budget is not None and not budget.take(address, len(data)):
            got = Refusal("address_quota", clean_name(name), len(data), budget.limit)
        else:
            got = await box.take(Upload.of_bytes(name, data), owner=caller.actor.label)
        if isinstance(got, Refusal):
            await deps.conversations.store.audit(
                actor=caller.actor.label,
                action="attachment.refused",
                code=got.code,
                detail={"name": got.name, "size": got.size},
            )
            response: Response = JSONResponse(
                {"error": "attachment_refused", "code": got.code, "message": refusal_text(got, locale)},
                status_code=REFUSAL_STATUS.get(got.code, 415),
            )
        else:
            response = JSONResponse(
                {"id": got.id, "name": got.name, "kind": got.kind, "size": got.size}, status_code=201
            )
        set_visitor_cookie(response, caller, deps)
        return response

    @router.get("/attachments/{attachment_id}")
    async def fetch(attachment_id: str, request: Request) -> Response:
        """Only the uploader gets a file back (anyone else: the same 404 as a missing one)."""
        box: AttachmentBox = deps_of(request).conversations.attachments
        item = await box.get(attachment_id)
        if item is None or item.owner != resolve_caller(request).actor.label:
            raise WebError(404, "attachment_not_found", "No such attachment.")
        data = await box.read(item)
        return attachment_response(item, data, inline=await box.renders_safely(item, data))

    return router


async def owned_attachments(box: AttachmentBox, caller: Caller, ids: Sequence[str]) -> list[StoredAttachment]:
    """The caller's own uploads not yet sent with a message; any other id is refused (400)."""
    items = []
    for attachment_id in dict.fromkeys(ids):
        item = await box.get(attachment_id)
        if item is None or item.owner != caller.actor.label or item.thread_id is not None:
            raise WebError(
                400, "attachment_not_found", "attachments: no such upload of yours.", field="attachments"
            )
        items.append(item)
    return items
