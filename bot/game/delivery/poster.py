"""Posting one grant or revoke to the studio's backend (DESIGN.md §11.2) and reading its answer: one
`httpx.AsyncClient` for the process, reused; every attempt of a grant carries its `Idempotency-Key`.

The answer is sorted into what the outbox does next: `delivered` (200/201; 409, or 200 for a key the
game had already granted), `retry` (5xx, 429 with its `Retry-After`, a timeout or a connection that
failed — the game may or may not have applied it; the same key makes the next attempt safe) or `dead`
(any other 4xx: the game refused it, with its reason, and asking again would not change that).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from bot.store.deliveries import ERROR_CHARS, DeliveryJob

USER_AGENT = "arca-support-bot (grants)"


@dataclass(frozen=True, slots=True)
class PostResult:
    """`delivered`, `retry` or `dead`; `error` says why (the backend's reason for a refusal);
    `retry_after` the seconds a 429 (or 503) asked us to wait."""

    result: str
    error: str | None = None
    retry_after: float | None = None


def backend_reason(answer: httpx.Response) -> str:
    """The status and the backend's own reason (`{"error": …}`, FastAPI's `{"detail": …}`, or the text)."""
    text = answer.text.strip()
    reason: Any = text
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        reason = body.get("error") or body.get("detail") or body.get("message") or text
    if not isinstance(reason, str):
        reason = json.dumps(reason, ensure_ascii=False)
    return f"{answer.status_code} {reason}".strip()[:ERROR_CHARS]


def retry_after_s(answer: httpx.Response, now: datetime | None = None) -> float | None:
    """`Retry-After` in seconds (a number of seconds or an HTTP date), or None."""
    value = answer.headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def classify(answer: httpx.Response) -> PostResult:
    """What the outbox does with this answer (see the module's docstring)."""
    status = answer.status_code
    if status in (200, 201, 409):
        return PostResult("delivered")
    if status == 429 or status >= 500:
        return PostResult("retry", backend_reason(answer), retry_after_s(answer))
    return PostResult("dead", backend_reason(answer))


class GrantPoster:
    """Posts jobs to `{base}/grants` and `{base}/grants/{grant_id}/revoke` with the bearer token."""

    def __init__(
        self, base_url: str, token: str | None, *, timeout_s: float, max_connections: int = 32
    ) -> None:
        headers = {"User-Agent": USER_AGENT}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._client = httpx.AsyncClient(
            base_url=base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s),
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )

    @classmethod
    def from_settings(cls, settings: Any) -> GrantPoster:
        token = settings.game_api_token.get_secret_value() if settings.game_api_token else None
        return cls(
            settings.game_api_url,
            token,
            timeout_s=settings.game_api_timeout_s,
            max_connections=settings.game_delivery_concurrency,
        )

    async def send(self, job: DeliveryJob) -> PostResult:
        """One attempt; never raises for what the network or the backend does."""
        headers = {"Idempotency-Key": job.grant_id}
        try:
            if job.kind == "revoke":
                answer = await self._client.post(f"/grants/{job.grant_id}/revoke", headers=headers)
            else:
                answer = await self._client.post("/grants", json=job.body(), headers=headers)
        except httpx.TimeoutException:
            return PostResult("retry", "timeout: no answer from the game backend")
        except httpx.TransportError as exc:
            return PostResult("retry", f"connection failed: {type(exc).__name__}")
        return classify(answer)

    async def aclose(self) -> None:
        await self._client.aclose()
