"""`/console`: an ephemeral one-time link to the staff console in the browser.

The link's token is random; only its SHA-256 is stored (`staff_links`), so `arca-bot console-link`
in another process can mint a link the running web server accepts. It works once, for 5 minutes.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any

from bot.staff.registry import Invocation, StaffCommand, StaffReply
from bot.store import Store, staff_sessions, utcnow

LINK_TTL = timedelta(minutes=5)
LOGIN_PATH = "/staff/login"
DEFAULT_BASE = "http://127.0.0.1:8080"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def console_base_url(settings: Any) -> str:
    """`ARCA_WEB_PUBLIC_URL`, else `http://HOST:PORT` of the web channel (port 8080 when unset)."""
    if settings.web_public_url:
        return settings.web_public_url.rstrip("/")
    host = settings.web_host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{settings.web_port or 8080}"


async def mint_link(
    store: Store, *, staff_id: str, staff_name: str, base: str, now: datetime | None = None
) -> str:
    """A one-time login URL for a staff member; the token is stored hashed, valid for `LINK_TTL`."""
    now = now or utcnow()
    token = secrets.token_urlsafe(32)
    await staff_sessions.add_link(
        store, token_hash(token), staff_id=staff_id, staff_name=staff_name, now=now, expires_at=now + LINK_TTL
    )
    return f"{base.rstrip('/')}{LOGIN_PATH}?token={token}"


async def cmd_console(inv: Invocation, args: dict[str, Any], base: str = DEFAULT_BASE) -> StaffReply:
    conv = inv.conversations
    staff_id = inv.actor.discord_id or inv.actor.display_name or "staff"
    url = await mint_link(
        conv.store, staff_id=staff_id, staff_name=inv.actor.display_name or staff_id, base=base
    )
    return StaffReply(
        f"운영 콘솔 일회용 로그인 링크 (5분 유효, 1회용) / one-time staff console link (5 min, single use):\n{url}",
        data={"url": url},
    )


def console_command(base_url: str | None = None) -> StaffCommand:
    """`/console`, linking to the web server at `base_url` (`console_base_url(settings)`)."""
    base = base_url or DEFAULT_BASE

    async def handler(inv: Invocation, args: dict[str, Any]) -> StaffReply:
        return await cmd_console(inv, args, base)

    return StaffCommand("console", (), "운영 콘솔 로그인 링크 / staff console sign-in link", handler)
