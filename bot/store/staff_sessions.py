"""The staff console's sign-in rows: redeeming a one-time link into a session, finding, touching, listing
and revoking sessions (`staff_links`, `staff_sessions`). Hashing tokens and the timeout rules belong to
the console (`bot.staffroom.console.auth`); this module only reads and writes the rows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update

from bot.store.database import Store
from bot.store.models import StaffLink, StaffSession

LOGIN_ACTOR = "web:staff-login"


async def add_link(
    store: Store, link_hash: str, *, staff_id: str, staff_name: str, now: datetime, expires_at: datetime
) -> None:
    """Keep a one-time sign-in link (only its token's hash) for a staff member, audited (`console.link`)."""
    async with store.session() as s, s.begin():
        s.add(
            StaffLink(
                token_hash=link_hash,
                staff_id=staff_id[:100],
                staff_name=staff_name[:100],
                created_at=now,
                expires_at=expires_at,
            )
        )
        await store.audit(
            actor=f"staff:{staff_id}"[:100],
            action="console.link",
            target=staff_name[:100],
            code="OK",
            session=s,
        )


@dataclass(frozen=True)
class NewSession:
    """What a session row needs besides the link it comes from: the hashed cookie and its CSRF token."""

    cookie_hash: str
    csrf: str
    user_agent: str | None


async def redeem_link(
    store: Store, link_hash: str, session: NewSession, *, now: datetime
) -> StaffSession | None:
    """Use the link whose token hashes to `link_hash` once and open `session` for its staff member, both
    audited (`console.login`) in one transaction; None when the link is unknown, used or expired."""
    async with store.session() as s, s.begin():
        # One UPDATE decides who uses the link: a second redemption finds `used_at` set and changes nothing.
        claimed = await s.execute(
            update(StaffLink)
            .where(StaffLink.token_hash == link_hash, StaffLink.used_at.is_(None), StaffLink.expires_at > now)
            .values(used_at=now)
        )
        if claimed.rowcount != 1:
            await store.audit(actor=LOGIN_ACTOR, action="console.login", code="DENIED", session=s)
            return None
        link = await s.get(StaffLink, link_hash)
        row = StaffSession(
            token_hash=session.cookie_hash,
            csrf=session.csrf,
            staff_id=link.staff_id,
            staff_name=link.staff_name,
            created_at=now,
            last_seen_at=now,
            user_agent=session.user_agent,
        )
        s.add(row)
        await s.flush()
        await store.audit(
            actor=f"staff:{link.staff_id}",
            action="console.login",
            target=f"session:{row.id}",
            code="OK",
            session=s,
        )
        return row


async def session_by_cookie(store: Store, cookie_hash: str) -> StaffSession | None:
    """The session row of a cookie's hash (revoked and timed-out ones included), read only."""
    async with store.session() as s:
        return (
            await s.execute(select(StaffSession).where(StaffSession.token_hash == cookie_hash))
        ).scalar_one_or_none()


async def touch_session(
    store: Store, cookie_hash: str, *, now: datetime, usable: Callable[[StaffSession], bool]
) -> StaffSession | None:
    """The session of a cookie's hash when `usable` says it still stands, its `last_seen_at` moved to `now`
    in the same transaction; None otherwise (and nothing written)."""
    async with store.session() as s, s.begin():
        row = (
            await s.execute(select(StaffSession).where(StaffSession.token_hash == cookie_hash))
        ).scalar_one_or_none()
        if row is None or not usable(row):
            return None
        row.last_seen_at = now
        return row


async def unrevoked_sessions(store: Store) -> list[StaffSession]:
    """Sessions not revoked, newest first (the console drops the timed-out ones)."""
    async with store.session() as s:
        query = select(StaffSession).where(StaffSession.revoked_at.is_(None)).order_by(StaffSession.id.desc())
        return list((await s.execute(query)).scalars())


async def revoke_session(store: Store, session_id: int, *, by_staff: str, now: datetime) -> bool:
    """End a session that still stands, audited (`console.revoke_session`); False when there was none."""
    async with store.session() as s, s.begin():
        done = await s.execute(
            update(StaffSession)
            .where(StaffSession.id == session_id, StaffSession.revoked_at.is_(None))
            .values(revoked_at=now)
        )
        ok = done.rowcount == 1
        await store.audit(
            actor=f"staff:{by_staff}",
            action="console.revoke_session",
            target=f"session:{session_id}",
            code="OK" if ok else "NOT_FOUND",
            session=s,
        )
        return ok
