"""Posting one grant or revoke to the studio's backend (DESIGN.md §11.2) and reading its answer: one
HTTP client for the process, reused; every attempt of a grant carries its `Idempotency-Key`.

The client is aiohttp's, not the httpx the order source uses: posting a 10,000-grant wave at 32 at a
time, httpx's connection pool spent several times aiohttp's CPU per request (bench/game_deliveries.py:
a bare httpx client reached about a fifth of a bare aiohttp client's grants per second on the same
reference backend), and these posts share the process with live conversations.

The answer is sorted into what the outbox does next: `delivered` (200/201; 409, or 200 for a key the
game had already granted), `retry` (5xx, 429 with its `Retry-After`, a timeout or a connection that
failed — the game may or may not have applied it; the same key makes the next attempt safe) or `dead`
(any other 4xx: the game refused it, with its reason, and asking again would not change that).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import aiohttp

from bot.store.game_deliveries import ERROR_CHARS, DeliveryJob

USER_AGENT = "arca-support-bot (grants)"


@dataclass(frozen=True, slots=True)
class PostResult:
    """`delivered`, `retry` or `dead`; `error` says why (the backend's reason for a refusal);
    `retry_after` the seconds a 429 (or 503) asked us to wait."""

    result: str
    error: str | None = None
    retry_after: float | None = None


class Answer(Protocol):
    """What is read of the game's answer (an `httpx.Response` has these too)."""

    @property
    def status_code(self) -> int: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ReadAnswer:
    """An answer read off the wire."""

    status_code: int
    headers: Mapping[str, str]
    text: str


def backend_reason(answer: Answer) -> str:
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


def retry_after_s(answer: Answer, now: datetime | None = None) -> float | None:
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


def classify(answer: Answer) -> PostResult:
    """What the outbox does with this answer (see the module's docstring)."""
    status = answer.status_code
    if status in (200, 201, 409):
        return PostResult("delivered")
    if status == 429 or status >= 500:
        return PostResult("retry", backend_reason(answer), retry_after_s(answer))
    return PostResult("dead", backend_reason(answer))


class GrantPoster:
    """Posts jobs to `{base}/grants` and `{base}/grants/{grant_id}/revoke` with the bearer token, on at
    most `max_connections` kept-alive connections (the worker's concurrency)."""

    def __init__(
        self, base_url: str, token: str | None, *, timeout_s: float, max_connections: int = 32
    ) -> None:
        self._base = base_url.rstrip("/")
        self._headers = {"User-Agent": USER_AGENT}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None

    @classmethod
    def from_settings(cls, settings: Any) -> GrantPoster:
        token = settings.game_api_token.get_secret_value() if settings.game_api_token else None
        return cls(
            settings.game_api_url,
            token,
            timeout_s=settings.game_api_timeout_s,
            max_connections=settings.game_delivery_concurrency,
        )

    def _client(self) -> aiohttp.ClientSession:
        # Made on first use: a session belongs to the loop it was made on (the worker's).
        if self._session is None:
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                timeout=self._timeout,
                connector=aiohttp.TCPConnector(limit=self._max_connections),
                json_serialize=lambda body: json.dumps(body, ensure_ascii=False, separators=(",", ":")),
            )
        return self._session

    async def send(self, job: DeliveryJob) -> PostResult:
        """One attempt; never raises for what the network or the backend does."""
        headers = {"Idempotency-Key": job.grant_id}
        if job.kind == "revoke":
            url, body = f"{self._base}/grants/{job.grant_id}/revoke", None
        else:
            url, body = f"{self._base}/grants", job.body()
        try:
            async with self._client().post(url, json=body, headers=headers) as answer:
                read = ReadAnswer(answer.status, answer.headers, await answer.text(errors="replace"))
        except TimeoutError:
            return PostResult("retry", "timeout: no answer from the game backend")
        except aiohttp.ClientError as exc:
            return PostResult("retry", f"connection failed: {type(exc).__name__}")
        return classify(read)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
