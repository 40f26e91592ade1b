"""Whether this process can serve (`/readyz`): the database answers, the policy index is loaded, and —
when orders come from the studio's backend (`ARCA_ORDER_SOURCE=http`) — that backend answers. Each
check is an async callable returning None when ready or a short reason (never a secret); the game
check is pluggable (`WebDeps.game_ready`), so the game connection can supply its own client's."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

ReadinessProbe = Callable[[], Awaitable[str | None]]
"""An async check: None when ready, else one short reason for the operator (no secret, no URL password)."""

CHECK_TIMEOUT_S = 3.0
"""The longest one check may take: a load balancer's probe must get an answer, not a hung request."""

PROBE_PLAYER = "arca-readiness-probe"
"""The player whose orders the default game probe asks for: any player id gets a 200 list (DESIGN §11)."""


async def run_checks(checks: dict[str, ReadinessProbe]) -> dict[str, str]:
    """Every check at once, each bounded by `CHECK_TIMEOUT_S`: name → `ok` or the reason it is not."""

    async def one(probe: ReadinessProbe) -> str:
        try:
            reason = await asyncio.wait_for(probe(), CHECK_TIMEOUT_S)
        except TimeoutError:
            return f"no answer within {CHECK_TIMEOUT_S:g} s"
        except Exception as exc:  # a check that fails is a not-ready answer, never a 500
            return f"failed: {type(exc).__name__}"
        return "ok" if reason is None else reason

    names = list(checks)
    results = await asyncio.gather(*(one(checks[n]) for n in names))
    return dict(zip(names, results, strict=True))


def database_probe(store: Any) -> ReadinessProbe:
    """The store answers one round trip."""

    async def probe() -> str | None:
        try:
            await store.ping()
        except Exception as exc:
            return f"unreachable: {type(exc).__name__}"
        return None

    return probe


def index_probe(index_state: Callable[[], str]) -> ReadinessProbe:
    """The policy index is loaded (`ready`); `building` or `unavailable` is not ready."""

    async def probe() -> str | None:
        state = index_state()
        return None if state == "ready" else state

    return probe


def http_game_probe(base_url: str, token: str | None, timeout_s: float) -> ReadinessProbe:
    """The studio's backend answers its player-orders route with 200 and the contract's JSON shape
    (`GET {base}/players/{id}/orders?limit=1`); 401/403 means the token is refused. Used until the game
    connection installs a probe of its own client."""

    async def probe() -> str | None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        url = f"{base_url}/players/{PROBE_PLAYER}/orders"
        client_timeout = aiohttp.ClientTimeout(total=min(timeout_s, CHECK_TIMEOUT_S))
        try:
            async with (
                aiohttp.ClientSession(timeout=client_timeout) as session,
                session.get(url, params={"limit": "1"}, headers=headers) as response,
            ):
                if response.status in (401, 403):
                    return f"refused ARCA_GAME_API_TOKEN ({response.status})"
                if response.status != 200:
                    return f"answered {response.status}"
                body = await response.json(content_type=None)
        except TimeoutError:
            return "no answer (timeout)"
        except aiohttp.ClientError as exc:
            return f"unreachable: {type(exc).__name__}"
        except ValueError:
            return "answered with a body that is not JSON"
        if not isinstance(body, dict) or not isinstance(body.get("orders"), list):
            return "answered without an `orders` list"
        return None

    return probe


def game_probe_from_settings(settings: Any) -> ReadinessProbe | None:
    """The default game check when orders come from the studio's backend; None when they do not."""
    if getattr(settings, "order_source", "builtin") != "http" or not settings.game_api_url:
        return None
    token = settings.game_api_token.get_secret_value() if settings.game_api_token is not None else None
    return http_game_probe(settings.game_api_url, token, settings.game_api_timeout_s)
