"""The `attachments` table: one row per file a player attached, the content hash that names its bytes on
disk (`bot.attachments.files`), who sent it and the thread it belongs to. Arrives with schema version 7
(`models.UPGRADABLE_FROM`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Index, Integer, String, delete, func, select, update
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.models import Base, UTCDateTime, utcnow


class AttachmentRow(Base):
    """One checked and stored attachment."""

    __tablename__ = "attachments"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    """A random id (the routes that serve it back name it; it is not the hash)."""
    sha256: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(120))
    """The sender's file name, cleaned (shown, never used as a path)."""
    mime: Mapped[str] = mapped_column(String(40))
    """The content type judged from the bytes (`bot.attachments.kinds`)."""
    kind: Mapped[str] = mapped_column(String(8))
    """`image` or `text`."""
    size: Mapped[int] = mapped_column(Integer)
    owner: Mapped[str] = mapped_column(String(200))
    """Who sent it: the actor's audit label, or the web identity's key."""
    thread_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    """The thread of the message it came with; None while a web upload waits for its message."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    linked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    """When the message it came with was taken in."""

    __table_args__ = (Index("ix_attachments_thread", "thread_id", "created_at"),)


async def add_attachment(store: Any, row: dict[str, Any]) -> None:
    await store.insert_rows([(AttachmentRow.__table__, [row])])


async def attachment_by_id(store: Any, attachment_id: str) -> AttachmentRow | None:
    async with store.session() as s:
        return await s.get(AttachmentRow, attachment_id)


async def link_attachments(store: Any, ids: list[str], thread_id: str, at: datetime) -> None:
    """Tie not-yet-linked attachments to the thread of the message they came with."""
    if not ids:
        return
    query = (
        update(AttachmentRow)
        .where(AttachmentRow.id.in_(ids), AttachmentRow.thread_id.is_(None))
        .values(thread_id=thread_id, linked_at=at)
    )
    async with store.session() as s:
        await s.execute(query)
        await s.commit()


async def thread_attachments(
    store: Any, thread_id: str, *, since: datetime | None = None, until: datetime | None = None
) -> list[AttachmentRow]:
    """The thread's attachments, oldest first (within `since`…`until` when given)."""
    query = select(AttachmentRow).where(AttachmentRow.thread_id == thread_id)
    if since is not None:
        query = query.where(AttachmentRow.linked_at >= since)
    if until is not None:
        query = query.where(AttachmentRow.linked_at <= until)
    query = query.order_by(AttachmentRow.linked_at, AttachmentRow.id).limit(200)
    async with store.session() as s:
        return list((await s.execute(query)).scalars().all())


async def unsent_usage(store: Any, owner: str) -> tuple[int, int]:
    """How many uploads of `owner` wait for their message, and their bytes together."""
    query = select(func.count(AttachmentRow.id), func.coalesce(func.sum(AttachmentRow.size), 0)).where(
        AttachmentRow.owner == owner, AttachmentRow.thread_id.is_(None)
    )
    async with store.session() as s:
        count, total = (await s.execute(query)).one()
    return int(count), int(total)


async def expire_unsent(store: Any, before: datetime) -> tuple[int, set[str]]:
    """Delete the uploads made before `before` that no message took; (rows deleted, the hashes of their
    bytes that no row names any more — the files that may go)."""
    async with store.session() as s:
        gone = (
            await s.execute(
                select(AttachmentRow.id, AttachmentRow.sha256).where(
                    AttachmentRow.thread_id.is_(None), AttachmentRow.created_at < before
                )
            )
        ).all()
        if not gone:
            return 0, set()
        ids = [row.id for row in gone]
        # Linked meanwhile (a message took it after the select): the `thread_id IS NULL` keeps it.
        result = await s.execute(
            delete(AttachmentRow).where(AttachmentRow.id.in_(ids), AttachmentRow.thread_id.is_(None))
        )
        await s.commit()
        shas = {row.sha256 for row in gone}
        still = set(
            (await s.execute(select(AttachmentRow.sha256).where(AttachmentRow.sha256.in_(shas)))).scalars()
        )
    return int(result.rowcount or 0), shas - still
