"""Saved replies (issue 26): named answers staff send into a conversation they took over, each with a
Korean and/or English text that may hold `{variables}`. The table arrives with schema version 7
(`models.UPGRADABLE_FROM`); what a variable may be is `bot.desk.saved_replies`' business."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import String, Text, delete, select
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.database import Store
from bot.store.models import Base, UTCDateTime, utcnow

MAX_NAME_CHARS = 40
MAX_TEXT_CHARS = 1800
"""A reply fits one Discord message with the staff label in front of it."""


class SavedReply(Base):
    """One named reply; at least one of the two texts is set."""

    __tablename__ = "saved_replies"

    name: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), primary_key=True)
    """Lowercase, `[a-z0-9_-]` or Hangul; what staff type after `/reply`."""
    text_ko: Mapped[str] = mapped_column(Text, default="")
    text_en: Mapped[str] = mapped_column(Text, default="")
    updated_by: Mapped[str] = mapped_column(String(100))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


@dataclass(frozen=True)
class ReplyRecord:
    """A saved reply as the store's callers see it."""

    name: str
    text_ko: str
    text_en: str
    updated_by: str
    updated_at: datetime


def _record(row: SavedReply) -> ReplyRecord:
    return ReplyRecord(row.name, row.text_ko, row.text_en, row.updated_by, row.updated_at)


async def save_reply(
    store: Store, *, name: str, text_ko: str, text_en: str, actor: str, now: datetime | None = None
) -> bool:
    """Create or replace `name` (audited `reply.saved` in the same transaction); True when it was new."""
    now = now or utcnow()
    async with store.session() as s, s.begin():
        row = await s.get(SavedReply, name)
        created = row is None
        if row is None:
            row = SavedReply(name=name)
            s.add(row)
        row.text_ko, row.text_en, row.updated_by, row.updated_at = text_ko, text_en, actor[:100], now
        await store.audit(
            actor=actor[:100],
            action="reply.saved",
            target=name,
            code="CREATED" if created else "UPDATED",
            session=s,
        )
    return created


async def delete_reply(store: Store, name: str, *, actor: str) -> bool:
    """Remove `name` (audited `reply.deleted`); False when there was none."""
    async with store.session() as s, s.begin():
        result = await s.execute(delete(SavedReply).where(SavedReply.name == name))
        if result.rowcount != 1:
            return False
        await store.audit(actor=actor[:100], action="reply.deleted", target=name, code="OK", session=s)
    return True


async def get_reply(store: Store, name: str) -> ReplyRecord | None:
    async with store.session() as s:
        row = await s.get(SavedReply, name)
        return _record(row) if row is not None else None


async def list_replies(store: Store, prefix: str = "", limit: int = 200) -> list[ReplyRecord]:
    """Saved replies by name; with `prefix`, those whose name starts with it (autocomplete)."""
    query = select(SavedReply).order_by(SavedReply.name).limit(limit)
    if prefix:
        query = query.where(SavedReply.name.startswith(prefix, autoescape=True))
    async with store.session() as s:
        return [_record(r) for r in (await s.execute(query)).scalars()]
