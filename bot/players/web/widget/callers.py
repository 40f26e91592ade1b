"""Who is calling: a player verified by the game server's token, or an anonymous visitor with a signed
cookie (DESIGN.md §7: the identity part of `web:<identity>:<thread>`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from bot.players.web.widget.limits import check_all
from bot.web_kit.deps import WebDeps, WebError, deps_of
from bot.web_kit.identity import ANON_COOKIE, ANON_COOKIE_MAX_AGE, Identity, TokenError
from tools.base import Actor


@dataclass
class Caller:
    identity: Identity
    new_cookie: str | None = None

    @property
    def actor(self) -> Actor:
        return self.identity.actor


def resolve_caller(request: Request) -> Caller:
    """The bearer token's player; else the visitor cookie's anonymous identity; else a new visitor."""
    deps = deps_of(request)
    auth = request.headers.get("authorization")
    if auth is not None:
        scheme, _, token = auth.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise WebError(401, "token_invalid", "Send the player token as `Authorization: Bearer <token>`.")
        try:
            return Caller(deps.identities.verify_token(token.strip()))
        except TokenError as exc:
            raise WebError(
                401, exc.code, exc.message, headers={"WWW-Authenticate": 'Bearer error="invalid_token"'}
            ) from None
    visitor = deps.identities.read_visitor(request.cookies.get(ANON_COOKIE))
    if visitor is not None:
        return Caller(visitor)
    wait = check_all([(request.app.state.new_visitors, client_address(request))])
    if wait:
        raise WebError(
            429,
            "rate_limited",
            f"요청이 너무 많습니다. {wait}초 후에 다시 시도해 주세요. / Too many new visitors from this address; "
            f"try again in {wait} s.",
            headers={"Retry-After": str(wait)},
            retry_after=wait,
        )
    identity, cookie = deps.identities.new_visitor()
    return Caller(identity, cookie)


def client_address(request: Request) -> str:
    """The client's address as the server sees it (a trusted proxy's `X-Forwarded-For` already applied)."""
    return request.client.host if request.client else "unknown"


def set_visitor_cookie(response: Response, caller: Caller, deps: WebDeps) -> None:
    if caller.new_cookie is None:
        return
    response.set_cookie(
        ANON_COOKIE,
        caller.new_cookie,
        max_age=ANON_COOKIE_MAX_AGE,
        httponly=True,
        secure=deps.secure_cookies,
        samesite="none" if deps.secure_cookies else "lax",
        path="/",
    )


def identity_json(identity: Identity) -> dict[str, Any]:
    return {"kind": identity.kind, "player_id": identity.player_id}
