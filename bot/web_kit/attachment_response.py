"""One way to send a kept attachment back over HTTP (to its uploader or to staff): the content type judged
from its bytes, never sniffed by the browser, never a page that runs anything, a safe file name."""

from __future__ import annotations

from urllib.parse import quote

from fastapi.responses import Response

from bot.attachments import StoredAttachment


def attachment_response(item: StoredAttachment, data: bytes, *, inline: bool = True) -> Response:
    """`inline` False: an image is offered as a download only (one past the pixel limit: a browser that
    drew it could spend gigabytes)."""
    disposition = "inline" if item.kind == "image" and inline else "attachment"
    ascii_name = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in item.name)
    headers = {
        "Content-Disposition": f"{disposition}; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(item.name)}",
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        "Cache-Control": "private, no-store",
        "Referrer-Policy": "no-referrer",
    }
    return Response(data, media_type=item.mime, headers=headers)


def thumbnail_response(data: bytes) -> Response:
    """A thumbnail the server drew (always a JPEG of at most `THUMB_SIDE` pixels a side)."""
    headers = {
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        "Cache-Control": "private, max-age=3600",
        "Referrer-Policy": "no-referrer",
    }
    return Response(data, media_type="image/jpeg", headers=headers)
