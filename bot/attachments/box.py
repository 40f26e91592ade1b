"""`AttachmentBox`: checks a player's file (size, then type by content), keeps it, links it to its thread
and reads it back — the one object every channel hands attachments to."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.attachments.files import AttachmentFiles
from bot.attachments.images import DEFAULT_MAX_PIXELS, image_pixels, thumbnail
from bot.attachments.kinds import sniff
from bot.attachments.uploads import Upload
from bot.store.attachments import (
    AttachmentRow,
    add_attachment,
    attachment_by_id,
    expire_unsent,
    link_attachments,
    thread_attachments,
    unsent_usage,
)

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
DEFAULT_UNSENT_FILES = 20
"""Uploads one sender may keep waiting for their message (`ARCA_ATTACHMENT_UNSENT_FILES`)."""
DEFAULT_UNSENT_BYTES = 128 * 1024 * 1024
"""Their bytes together (`ARCA_ATTACHMENT_UNSENT_BYTES`; above ten files at the 8 MiB limit, Discord's most
in one message)."""
DEFAULT_UNSENT_TTL = timedelta(hours=1)
"""An upload no message took within this long is deleted (`ARCA_ATTACHMENT_UNSENT_MINUTES`)."""
MAX_NAME = 100
MAX_PER_MESSAGE = 10
"""Discord's own limit; the widget sends fewer."""


@dataclass(frozen=True)
class StoredAttachment:
    """A checked file as the rest of the bot sees it."""

    id: str
    name: str
    kind: str
    """`image` or `text`."""
    mime: str
    size: int
    sha256: str
    owner: str
    thread_id: str | None = None
    at: datetime | None = None

    @classmethod
    def of_row(cls, row: AttachmentRow) -> StoredAttachment:
        return cls(
            row.id,
            row.name,
            row.kind,
            row.mime,
            row.size,
            row.sha256,
            row.owner,
            row.thread_id,
            row.linked_at,
        )


@dataclass(frozen=True)
class Refusal:
    """A file that was not kept, and why: `too_large`, `too_many_pixels` (an image whose header claims more
    than the pixel limit: `size` holds its pixels), `executable`, `wrong_type`, `quota` (the sender's
    unsent uploads are at their limit) or `address_quota` (the anonymous visitors of one address are)."""

    code: str
    name: str
    size: int
    limit: int


def clean_name(name: str) -> str:
    """The last path part, without control characters, at most `MAX_NAME` characters."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip() or "file"
    return base[-MAX_NAME:]


class AttachmentBox:
    """Checks and keeps attachments; `max_bytes` is `ARCA_ATTACHMENT_MAX_BYTES`; a sender keeps at most
    `unsent_files` / `unsent_bytes` of uploads no message took yet, and `sweep` deletes those older than
    `unsent_ttl`."""

    def __init__(
        self,
        store: Any,
        root: Path | None = None,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        unsent_files: int = DEFAULT_UNSENT_FILES,
        unsent_bytes: int = DEFAULT_UNSENT_BYTES,
        unsent_ttl: timedelta = DEFAULT_UNSENT_TTL,
        max_pixels: int = DEFAULT_MAX_PIXELS,
        clock: Callable[[], datetime] | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> None:
        self.store = store
        self.files = AttachmentFiles(root)
        self.max_bytes = max_bytes
        self.unsent_files = unsent_files
        self.unsent_bytes = unsent_bytes
        self.unsent_ttl = unsent_ttl
        self.max_pixels = max_pixels
        self.clock = clock or (lambda: datetime.now(UTC))
        self.new_id = new_id or (lambda: uuid.uuid4().hex)

    async def take(self, upload: Upload, *, owner: str) -> StoredAttachment | Refusal:
        """Check `upload` (declared size first, so a huge file is never downloaded) and keep it."""
        name = clean_name(upload.name)
        if upload.size > self.max_bytes:
            return Refusal("too_large", name, upload.size, self.max_bytes)
        data = await upload.read()
        if len(data) > self.max_bytes:
            return Refusal("too_large", name, len(data), self.max_bytes)
        sniffed = sniff(data, name)
        if sniffed.kind == "executable":
            return Refusal("executable", name, len(data), self.max_bytes)
        if sniffed.mime is None:
            return Refusal("wrong_type", name, len(data), self.max_bytes)
        if sniffed.kind == "image":
            pixels = await asyncio.to_thread(image_pixels, data)  # the header only: nothing is decoded
            if pixels is None:
                return Refusal("wrong_type", name, len(data), self.max_bytes)
            if pixels > self.max_pixels:
                return Refusal("too_many_pixels", name, pixels, self.max_pixels)
        count, total = await unsent_usage(self.store, owner)
        if count >= self.unsent_files or total + len(data) > self.unsent_bytes:
            return Refusal("quota", name, len(data), self.unsent_bytes)
        sha = await self.files.put(data)
        row = {
            "id": self.new_id(),
            "sha256": sha,
            "name": name,
            "mime": sniffed.mime,
            "kind": sniffed.kind,
            "size": len(data),
            "owner": owner,
            "thread_id": None,
            "created_at": self.clock(),
            "linked_at": None,
        }
        await add_attachment(self.store, row)
        return StoredAttachment(row["id"], name, sniffed.kind, sniffed.mime, len(data), sha, owner)

    async def link(self, items: list[StoredAttachment], thread_id: str) -> None:
        await link_attachments(
            self.store, [a.id for a in items if a.thread_id is None], thread_id, self.clock()
        )

    async def get(self, attachment_id: str) -> StoredAttachment | None:
        if not re.fullmatch(r"[0-9a-f]{32}", attachment_id or ""):
            return None
        row = await attachment_by_id(self.store, attachment_id)
        return None if row is None else StoredAttachment.of_row(row)

    async def read(self, item: StoredAttachment) -> bytes:
        return await self.files.get(item.sha256)

    async def thumbnail(self, item: StoredAttachment) -> bytes | None:
        """A small JPEG of an image attachment, made on the server once and kept beside the files; None for
        a text file, or an image past `max_pixels` (kept before the limit existed) or unreadable."""
        if item.kind != "image":
            return None
        cached = await self.files.get_thumbnail(item.sha256)
        if cached is not None:
            return cached
        made = await asyncio.to_thread(thumbnail, await self.read(item), max_pixels=self.max_pixels)
        if made is not None:
            await self.files.put_thumbnail(item.sha256, made)
        return made

    async def renders_safely(self, item: StoredAttachment, data: bytes) -> bool:
        """Whether a browser may draw `data` inline: not an image, or one within `max_pixels`."""
        if item.kind != "image":
            return True
        pixels = await asyncio.to_thread(image_pixels, data)
        return pixels is not None and pixels <= self.max_pixels

    async def of_thread(
        self, thread_id: str, *, since: datetime | None = None, until: datetime | None = None
    ) -> list[StoredAttachment]:
        rows = await thread_attachments(self.store, thread_id, since=since, until=until)
        return [StoredAttachment.of_row(r) for r in rows]

    async def sweep(self) -> int:
        """Delete the uploads no message took within `unsent_ttl`, and the bytes no other upload shares;
        the number deleted."""
        count, unused = await expire_unsent(self.store, self.clock() - self.unsent_ttl)
        # File ages are wall-clock times (the box's clock may be a test's fixed one): a file kept again
        # since the cutoff belongs to a newer upload and stays.
        cutoff = time.time() - self.unsent_ttl.total_seconds()
        for sha in unused:
            await asyncio.to_thread(self.files.remove_if_older, sha, cutoff)
        return count
