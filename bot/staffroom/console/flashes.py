"""The console's flash messages: what a form post did, shown on the page it redirects to.

The text and what the staff member typed stay on the server; the redirect names them by a random key
(`?flash=…`), and only the session that made them sees them. A link with any text in its query string
(`?ok=1&msg=…`) therefore shows nothing: no page shows a banner the server did not write (a phishing
link cannot dress up as a console success message).
Written by hand: a bounded dict with an expiry is a dozen lines, where a session middleware would bring
a second cookie and a signing key for the same job.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

KEPT = 5_000
"""Flashes remembered (per process); the oldest are forgotten first."""
TTL_SECONDS = 15 * 60
"""A flash is shown on its redirect (and reloads of it) for this long."""
KEY_PATTERN = r"[A-Za-z0-9_-]{16,32}"
KEPT_BYTES = 32 * 1024 * 1024
"""All flashes' kept form values together at most this size (a declare form may carry a large CSV)."""


@dataclass(frozen=True)
class Flash:
    """One message for one session, with the form values to put back (`kept`)."""

    text: str
    ok: bool
    owner: str
    kept: dict[str, str] = field(default_factory=dict)
    at: float = 0.0


def owner_of(session_cookie: str | None) -> str:
    """Whose flash it is: a digest of the session cookie (the cookie itself is never kept)."""
    return hashlib.sha256((session_cookie or "").encode()).hexdigest()


class FlashBox:
    """Flashes by key, bounded in number and age."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._items: OrderedDict[str, Flash] = OrderedDict()
        self._bytes = 0

    def put(self, text: str, ok: bool, owner: str, kept: dict[str, str] | None = None) -> str:
        key = secrets.token_urlsafe(16)
        flash = Flash(text, ok, owner, dict(kept or {}), self._clock())
        self._items[key] = flash
        self._bytes += _size(flash)
        while len(self._items) > KEPT or (self._bytes > KEPT_BYTES and len(self._items) > 1):
            _, dropped = self._items.popitem(last=False)
            self._bytes -= _size(dropped)
        return key

    def get(self, key: str, owner: str) -> Flash | None:
        flash = self._items.get(key)
        if flash is None or not secrets.compare_digest(flash.owner, owner):
            return None
        if self._clock() - flash.at > TTL_SECONDS:
            del self._items[key]
            self._bytes -= _size(flash)
            return None
        return flash


def _size(flash: Flash) -> int:
    return len(flash.text) + sum(len(k) + len(v) for k, v in flash.kept.items())
