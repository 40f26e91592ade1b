"""Claims of the support desk's timed work (issue 26): each SLA reminder and each auto-close is done by
exactly one process, whichever inserts its key first; the primary key decides, on SQLite and PostgreSQL
alike. The table arrives with schema version 7 (`models.UPGRADABLE_FROM`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.database import Store
from bot.store.models import Base, UTCDateTime, utcnow
from bot.store.units import is_unique_violation


class DeskClaim(Base):
    """One piece of timed desk work, claimed: `sla:<escalation>:<target>` or `close:<escalation>`."""

    __tablename__ = "desk_claims"

    key: Mapped[str] = mapped_column(String(120), primary_key=True)
    by: Mapped[str] = mapped_column(String(100))
    """Which process claimed it (host and pid), for the operator reading the table."""
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


async def claim(store: Store, key: str, *, by: str, now: datetime | None = None) -> bool:
    """True for the one caller whose insert of `key` committed; every other process gets False."""
    try:
        async with store.session() as s, s.begin():
            s.add(DeskClaim(key=key[:120], by=by[:100], at=now or utcnow()))
    except IntegrityError as exc:
        if not is_unique_violation(exc):
            raise
        return False
    return True
