"""The console's view of a conversation's attachments: thumbnails of screenshots (drawn by the server,
`/staff/attachments/ID/thumb`) and text files shown as escaped text on the conversation page, and
`/staff/attachments/ID` serving a file to signed-in staff (an image past the pixel limit as a download)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from bot.attachments.texts import size_text
from bot.staffroom.console.pages import conversations_of, render, require_user
from bot.web_kit.attachment_response import attachment_response, thumbnail_response

TEXT_SHOWN = 20_000
"""Characters of a text file shown on the page (the whole file is one click away)."""


async def attachment_cards(conv: Any, thread_id: str) -> list[dict[str, Any]]:
    """What the conversation page shows for each of the thread's attachments."""
    cards = []
    for item in await conv.attachments.of_thread(thread_id):
        card: dict[str, Any] = {"item": item, "size": size_text(item.size), "text": None}
        if item.kind == "text":
            card["text"] = (await conv.attachments.read(item)).decode("utf-8", "replace")[:TEXT_SHOWN]
        cards.append(card)
    return cards


def add_attachment_routes(router: APIRouter) -> None:
    @router.get("/attachments/{attachment_id}")
    async def attachment_file(attachment_id: str, request: Request) -> Response:
        user = await require_user(request)
        box = conversations_of(request).attachments
        item = await box.get(attachment_id)
        if item is None:
            return render(request, "message.html", user, status=404, text="not found")
        data = await box.read(item)
        return attachment_response(item, data, inline=await box.renders_safely(item, data))

    @router.get("/attachments/{attachment_id}/thumb")
    async def attachment_thumbnail(attachment_id: str, request: Request) -> Response:
        """The server's own small JPEG of a screenshot: the page never draws the player's file itself."""
        user = await require_user(request)
        box = conversations_of(request).attachments
        item = await box.get(attachment_id)
        made = await box.thumbnail(item) if item is not None else None
        if made is None:
            return render(request, "message.html", user, status=404, text="not found")
        return thumbnail_response(made)
