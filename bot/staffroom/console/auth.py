"""Staff console sign-in: one-time links, server-side sessions and CSRF tokens.

A link token and a session cookie are random 32-byte secrets; the database keeps only their SHA-256,
so a copy of the database opens nothing. A link works once, for `LINK_TTL`; it opens a session row
that ends after `IDLE_TIMEOUT` without a request, after `MAX_AGE`, or when staff revoke it.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select, update

from bot.staff.console import LINK_TTL, LOGIN_PATH, console_base_url, mint_link, token_hash
from bot.store import Store, utcnow
from bot.store.models import StaffLink, StaffSession
from tools.base import Actor

__all__ = ["LINK_TTL", "LOGIN_PATH", "console_base_url", "mint_link", "token_hash"]

IDLE_TIMEOUT = timedelta(minutes=30)
MAX_AGE = timedelta(hours=12)
SESSION_COOKIE = "arca_staff"
LOGIN_COOKIE = "arca_staff_login"
"""The sign-in page's token; `POST /staff/login` must send it back as the form's `login_csrf`."""


@dataclass(frozen=True)
class StaffUser:
    session_id: int
    staff_id: str
    name: str
    csrf: str

    def actor(self, staff_role: str) -> Actor:
        """The same actor a Discord staff member is: audit rows read `staff:<id>`."""
        return Actor(
            discord_id=self.staff_id, roles=frozenset({staff_role}), is_staff=True, display_name=self.name
        )


async def redeem_link(
    store: Store, token: str, *, user_agent: str | None = None
) -> tuple[str, StaffUser] | None:
    """Use a link once: (session cookie value, user) or None when unknown, used or expired."""
    now = utcnow()
    async with store.session() as s, s.begin():
        # One UPDATE decides who uses the link: a second redemption finds `used_at` set and changes nothing.
        claimed = await s.execute(
            update(StaffLink)
            .where(
                StaffLink.token_hash == token_hash(token),
                StaffLink.used_at.is_(None),
                StaffLink.expires_at > now,
            )
            .values(used_at=now)
        )
        if claimed.rowcount != 1:
            await store.audit(actor="web:staff-login", action="console.login", code="DENIED", session=s)
            return None
        link = await s.get(StaffLink, token_hash(token))
        cookie = secrets.token_urlsafe(32)
        row = StaffSession(
            token_hash=token_hash(cookie),
            csrf=secrets.token_urlsafe(24),
            staff_id=link.staff_id,
            staff_name=link.staff_name,
            created_at=now,
            last_seen_at=now,
            user_agent=(user_agent or "")[:200] or None,
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
        return cookie, StaffUser(row.id, row.staff_id, row.staff_name, row.csrf)


async def session_user(store: Store, cookie: str | None) -> StaffUser | None:
    """The signed-in staff member of a session cookie (and the session is touched), else None."""
    if not cookie:
        return None
    now = utcnow()
    async with store.session() as s, s.begin():
        row = (
            await s.execute(select(StaffSession).where(StaffSession.token_hash == token_hash(cookie)))
        ).scalar_one_or_none()
        if row is None or row.revoked_at is not None:
            return None
        if now - row.last_seen_at > IDLE_TIMEOUT or now - row.created_at > MAX_AGE:
            return None
        row.last_seen_at = now
        return StaffUser(row.id, row.staff_id, row.staff_name, row.csrf)


async def session_active(store: Store, cookie: str | None) -> bool:
    """Whether a session still stands (not revoked, not timed out), without counting as activity: a
    live page left open does not keep its session alive."""
    if not cookie:
        return False
    now = utcnow()
    async with store.session() as s:
        row = (
            await s.execute(select(StaffSession).where(StaffSession.token_hash == token_hash(cookie)))
        ).scalar_one_or_none()
    return (
        row is not None
        and row.revoked_at is None
        and now - row.last_seen_at <= IDLE_TIMEOUT
        and now - row.created_at <= MAX_AGE
    )


def login_form_ok(cookie: str | None, sent: str | None) -> bool:
    """Whether a sign-in form came from the page this server showed (its cookie and field agree)."""
    return bool(cookie) and bool(sent) and hmac.compare_digest(str(cookie).encode(), str(sent).encode())


def csrf_ok(user: StaffUser, sent: str | None) -> bool:
    return bool(sent) and hmac.compare_digest(user.csrf.encode(), str(sent).encode())


async def list_sessions(store: Store) -> list[StaffSession]:
    """Sessions not revoked and not timed out, newest first."""
    now = utcnow()
    async with store.session() as s:
        rows = (
            await s.execute(
                select(StaffSession).where(StaffSession.revoked_at.is_(None)).order_by(StaffSession.id.desc())
            )
        ).scalars()
        return [r for r in rows if now - r.last_seen_at <= IDLE_TIMEOUT and now - r.created_at <= MAX_AGE]


async def revoke_session(store: Store, session_id: int, *, by: StaffUser) -> bool:
    async with store.session() as s, s.begin():
        done = await s.execute(
            update(StaffSession)
            .where(StaffSession.id == session_id, StaffSession.revoked_at.is_(None))
            .values(revoked_at=utcnow())
        )
        ok = done.rowcount == 1
        await store.audit(
            actor=f"staff:{by.staff_id}",
            action="console.revoke_session",
            target=f"session:{session_id}",
            code="OK" if ok else "NOT_FOUND",
            session=s,
        )
        return ok
