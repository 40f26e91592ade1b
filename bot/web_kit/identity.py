"""Who is talking on the web: a player vouched for by the game's server, or an anonymous visitor.

The game's server signs a short-lived JWT (HS256 with `ARCA_WEB_SECRET`; claims `sub` = player id and
`exp`) and the widget sends it as `Authorization: Bearer`. Without a token the visitor is an unlinked
user, recognised by a signed cookie of its own (claim `anon`), so two visitors never share a thread.
PyJWT does the signing and checking: a maintained implementation of exactly this (RFC 7519, `exp`
with leeway, required claims, algorithm pinning), where a hand-written HMAC would get details wrong.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass
from typing import Literal

import jwt

from bot.vocabulary import ThreadId
from tools.base import Actor

ALGORITHM = "HS256"
ANON_COOKIE = "arca_web_visitor"
ANON_COOKIE_MAX_AGE = 365 * 24 * 3600
IDENTITY_PATTERN = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
"""What a player id may look like: it becomes part of the thread id `web:<identity>:<thread>`."""
DEFAULT_TTL = 15 * 60
MIN_SECRET_BYTES = 32
"""A shorter HS256 key is guessed from one token in seconds, and then any player's token is forged."""


def secret_problem(secret: str) -> str | None:
    """Why `ARCA_WEB_SECRET` cannot sign tokens (never quoting it), or None for a usable key."""
    if len(secret.encode()) < MIN_SECRET_BYTES:
        return (
            f"ARCA_WEB_SECRET is shorter than {MIN_SECRET_BYTES} bytes: set a long random value, e.g. the "
            'output of `python -c "import secrets; print(secrets.token_urlsafe(32))"`'
        )
    return None


class TokenError(Exception):
    """A bearer token was sent but cannot be trusted; `code` is `token_expired` or `token_invalid`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Identity:
    """A verified player (`kind="player"`, `key` = the token's `sub`) or an anonymous visitor."""

    kind: Literal["player", "anon"]
    key: str

    @property
    def player_id(self) -> str | None:
        return self.key if self.kind == "player" else None

    def thread_id(self, thread: str) -> str:
        """DESIGN §7: `web:<identity>:<thread>`."""
        return ThreadId.web(self.key, thread)

    @classmethod
    def of_thread(cls, thread_id: str) -> Identity | None:
        """Whose `web:<identity>:<thread>` thread this is (None for another channel's thread)."""
        key = (ThreadId(thread_id).web_parts or ("", ""))[0]
        if not IDENTITY_PATTERN.fullmatch(key):
            return None
        return cls("anon" if key.startswith("anon-") else "player", key)

    @property
    def actor(self) -> Actor:
        """The actor this identity's messages run as (its `label` is what analytics and the console show)."""
        return Actor(discord_id=None, player_id=self.player_id, display_name=f"web:{self.key}")


class IdentityService:
    """Verifies player tokens and issues / reads the anonymous visitor cookie, with one secret."""

    def __init__(self, secret: str, *, leeway: float = 5.0) -> None:
        if not secret:
            raise ValueError("an empty secret would accept forged tokens")
        self._secret = secret
        self.leeway = leeway

    def issue_token(
        self, player_id: str, ttl_seconds: float = DEFAULT_TTL, *, now: float | None = None
    ) -> str:
        """A player token as the game's server makes it (`arca-bot web-token`, tests)."""
        if not IDENTITY_PATTERN.fullmatch(player_id):
            raise ValueError("a player id is 1-64 letters, digits or _ . @ -")
        if player_id.startswith("anon-"):
            # `anon-…` names anonymous visitors: `verify_token` refuses it, so no token carries it.
            raise ValueError("a player id may not start with `anon-` (reserved for anonymous visitors)")
        issued = int(time.time() if now is None else now)
        claims = {"sub": player_id, "iat": issued, "exp": issued + int(ttl_seconds)}
        return jwt.encode(claims, self._secret, algorithm=ALGORITHM)

    def verify_token(self, token: str) -> Identity:
        try:
            claims = jwt.decode(
                token,
                self._secret,
                algorithms=[ALGORITHM],
                options={"require": ["sub", "exp"]},
                leeway=self.leeway,
            )
        except jwt.ExpiredSignatureError:
            raise TokenError("token_expired", "The sign-in token has expired; reload the page.") from None
        except jwt.InvalidTokenError:
            raise TokenError("token_invalid", "The sign-in token is not valid.") from None
        sub = claims.get("sub")
        if not isinstance(sub, str) or not IDENTITY_PATTERN.fullmatch(sub) or sub.startswith("anon-"):
            raise TokenError("token_invalid", "The sign-in token names no valid player id.")
        return Identity("player", sub)

    def new_visitor(self) -> tuple[Identity, str]:
        """A fresh anonymous identity and the cookie value that proves it."""
        key = "anon-" + secrets.token_urlsafe(16).replace("_", "x").replace("-", "y")
        cookie = jwt.encode({"anon": key, "iat": int(time.time())}, self._secret, algorithm=ALGORITHM)
        return Identity("anon", key), cookie

    def read_visitor(self, cookie: str | None) -> Identity | None:
        """The anonymous identity of a valid cookie; None for a missing, forged or malformed one."""
        if not cookie:
            return None
        try:
            claims = jwt.decode(cookie, self._secret, algorithms=[ALGORITHM], options={"require": ["anon"]})
        except jwt.InvalidTokenError:
            return None
        key = claims.get("anon")
        if not isinstance(key, str) or not key.startswith("anon-") or not IDENTITY_PATTERN.fullmatch(key):
            return None
        return Identity("anon", key)


def parse_ttl(text: str) -> int:
    """`15m`, `900`, `2h`, `30s`, `1d` → seconds."""
    match = re.fullmatch(r"\s*(\d+)\s*([smhd]?)\s*", text or "")
    if not match or int(match.group(1)) <= 0:
        raise ValueError(f"expected a duration such as 15m, 2h or 900 (seconds), got {text!r}")
    return int(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]
