"""Staff console sign-in: one-time links, server-side sessions and CSRF tokens.

A link token and a session cookie are random 32-byte secrets; the database keeps only their SHA-256,
so a copy of the database opens nothing. A link works once, for `LINK_TTL`; it opens a session row
that ends after `IDLE_TIMEOUT` without a request, after `MAX_AGE`, or when staff revoke it.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.staff.console import LINK_TTL, LOGIN_PATH, console_base_url, mint_link, token_hash
from bot.store import Store, staff_sessions, utcnow
from bot.store.models import StaffSession
from bot.store.staff_sessions import NewSession
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
    cookie = secrets.token_urlsafe(32)
    fresh = NewSession(token_hash(cookie), secrets.token_urlsafe(24), (user_agent or "")[:200] or None)
    row = await staff_sessions.redeem_link(store, token_hash(token), fresh, now=utcnow())
    if row is None:
        return None
    return cookie, StaffUser(row.id, row.staff_id, row.staff_name, row.csrf)


def _stands(row: StaffSession, now: datetime) -> bool:
    """Not revoked, not idle for `IDLE_TIMEOUT`, not older than `MAX_AGE`."""
    return (
        row.revoked_at is None and now - row.last_seen_at <= IDLE_TIMEOUT and now - row.created_at <= MAX_AGE
    )


async def session_user(store: Store, cookie: str | None) -> StaffUser | None:
    """The signed-in staff member of a session cookie (and the session is touched), else None."""
    if not cookie:
        return None
    now = utcnow()
    row = await staff_sessions.touch_session(
        store, token_hash(cookie), now=now, usable=lambda r: _stands(r, now)
    )
    return StaffUser(row.id, row.staff_id, row.staff_name, row.csrf) if row is not None else None


async def session_active(store: Store, cookie: str | None) -> bool:
    """Whether a session still stands (not revoked, not timed out), without counting as activity: a
    live page left open does not keep its session alive."""
    if not cookie:
        return False
    now = utcnow()
    row = await staff_sessions.session_by_cookie(store, token_hash(cookie))
    return row is not None and _stands(row, now)


def login_form_ok(cookie: str | None, sent: str | None) -> bool:
    """Whether a sign-in form came from the page this server showed (its cookie and field agree)."""
    return bool(cookie) and bool(sent) and hmac.compare_digest(str(cookie).encode(), str(sent).encode())


def csrf_ok(user: StaffUser, sent: str | None) -> bool:
    return bool(sent) and hmac.compare_digest(user.csrf.encode(), str(sent).encode())


async def list_sessions(store: Store) -> list[StaffSession]:
    """Sessions not revoked and not timed out, newest first."""
    now = utcnow()
    return [r for r in await staff_sessions.unrevoked_sessions(store) if _stands(r, now)]


async def revoke_session(store: Store, session_id: int, *, by: StaffUser) -> bool:
    return await staff_sessions.revoke_session(store, session_id, by_staff=by.staff_id, now=utcnow())
