"""`arca-bot doctor`'s look at the game's backend: reachable, the token accepted, the contract's path
answering, and the clocks in step (the game's signed events are refused more than 300 s apart)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Literal

import httpx

PROBE_PLAYER = "__arca_doctor__"
"""A player id no backend has: its order list (`{"orders": []}`) proves path and token, reading nothing."""
SKEW_WARN_S = 60
SKEW_FAIL_S = 300


@dataclass(frozen=True)
class ConnectionCheck:
    status: Literal["ok", "warn", "fail"]
    detail: str
    fix: str = ""


def _skew(date_header: str | None, now: datetime) -> float | None:
    if not date_header:
        return None
    try:
        told = parsedate_to_datetime(date_header)
    except (TypeError, ValueError):
        return None
    if told.tzinfo is None:
        told = told.replace(tzinfo=UTC)
    return (now - told).total_seconds()


async def check_connection(
    base_url: str,
    token: str | None,
    *,
    timeout_s: float,
    transport: httpx.AsyncBaseTransport | None = None,
) -> ConnectionCheck:
    """One request to `GET {base}/players/{probe}/orders?limit=1`; what it says about the connection."""
    if not token:
        return ConnectionCheck(
            "fail", "ARCA_GAME_API_TOKEN is not set", "set it to the bearer token the backend expects"
        )
    path = f"/players/{PROBE_PLAYER}/orders"
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    try:
        async with httpx.AsyncClient(base_url=base_url, timeout=timeout_s, transport=transport) as client:
            answer = await client.get(path, params={"limit": 1}, headers=headers)
    except httpx.TimeoutException:
        return ConnectionCheck(
            "fail",
            f"{base_url} gave no answer within {timeout_s:g} s",
            "check the backend is running, or raise ARCA_GAME_API_TIMEOUT_S",
        )
    except httpx.TransportError as exc:
        return ConnectionCheck(
            "fail",
            f"cannot reach {base_url} ({type(exc).__name__})",
            "check ARCA_GAME_API_URL and that the backend is running and reachable from this machine",
        )
    now = datetime.now(UTC)
    code = answer.status_code
    if code in (401, 403):
        return ConnectionCheck(
            "fail",
            f"{base_url} refused ARCA_GAME_API_TOKEN (HTTP {code})",
            "set ARCA_GAME_API_TOKEN to the token the backend expects",
        )
    if code == 404:
        return ConnectionCheck(
            "fail",
            f"{base_url}{path} answered 404: the order API is not at this address",
            "ARCA_GAME_API_URL must be the API's base, e.g. https://game.example/arca/v1 (no trailing slash)",
        )
    if code != 200:
        return ConnectionCheck(
            "fail", f"{base_url} answered HTTP {code}", "the backend is unhealthy; see its own logs"
        )
    try:
        body = answer.json()
        shaped = isinstance(body, dict) and isinstance(body.get("orders"), list)
    except ValueError:
        shaped = False
    if not shaped:
        return ConnectionCheck(
            "fail",
            f'{base_url}{path} did not answer {{"orders": [...]}}',
            "the backend must implement DESIGN.md §11 / examples/game_backend/openapi.yaml",
        )
    skew = _skew(answer.headers.get("date"), now)
    where = f"{base_url} reachable, token accepted"
    if skew is None:
        return ConnectionCheck("warn", f"{where}; no Date header, clock skew unknown", "send a Date header")
    if abs(skew) > SKEW_FAIL_S:
        return ConnectionCheck(
            "fail",
            f"{where}; clocks {abs(skew):.0f} s apart",
            "sync both clocks (NTP): the game's signed events are refused beyond 300 s",
        )
    if abs(skew) > SKEW_WARN_S:
        return ConnectionCheck("warn", f"{where}; clocks {abs(skew):.0f} s apart", "sync both clocks (NTP)")
    return ConnectionCheck("ok", f"{where}; clocks within {max(abs(skew), 1):.0f} s")
