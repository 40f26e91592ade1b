"""The http order source: the studio's backend read over HTTP (DESIGN.md §11), with the faults of a
network in mind — a per-request timeout, bounded retries with backoff and jitter (5xx, timeouts, 429
honouring a short `Retry-After`), a circuit breaker, a short read cache that eligibility reads bypass,
a capped body, and every order validated before anything trusts it. Each order read from the network
is mirrored into the embedded table, so the ledger's rows always name stored orders."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx
from cachetools import TTLCache
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

from bot.game.orders.breaker import Breaker, CircuitOpen
from bot.game.orders.source import PlayerOrders, SourceUnavailable
from bot.game.orders.wire import BadData, order_list, parse_order
from bot.store import OrderRecord, utcnow

log = logging.getLogger(__name__)

PLAYER_WINDOW = 100
"""Orders asked of `GET /players/{id}/orders` when a status filter is applied here (the API has none)."""
SEARCH_PAGE = 500
"""`limit` of one page of `GET /orders` (an incident's scope)."""
_NOT_FOUND = object()


class _Transient(Exception):
    """A failure worth retrying and counted by the breaker: connection, timeout, 5xx, 429."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def _retry_after(value: str | None) -> float | None:
    if value is None or not value.strip().isdigit():
        return None  # an HTTP date is rare for 429; the backoff's own wait applies then
    return float(value.strip())


async def _read_capped(response: httpx.Response, limit: int) -> bytes:
    """The body, read no further than `limit` bytes (a 2 MB answer is refused, never held whole)."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BadData(f"answer of {declared} bytes is over the {limit}-byte limit")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise BadData(f"answer longer than the {limit}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks)


Mirror = Callable[[list[OrderRecord]], Awaitable[None]]


class HttpOrderSource:
    """`OrderSource` over the studio's API; one `httpx.AsyncClient` for the process, made on first use."""

    name = "http"

    def __init__(
        self,
        *,
        base_url: str,
        token: str | None,
        timeout_s: float = 3.0,
        retries: int = 2,
        cache_s: float = 30.0,
        breaker_failures: int = 5,
        breaker_recovery_s: float = 15.0,
        max_body_bytes: int = 1_048_576,
        mirror: Mirror | None = None,
        backoff_s: float = 0.05,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._timeout = timeout_s
        self._attempts = retries + 1
        self._max_body = max_body_bytes
        self._mirror = mirror
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._cache: TTLCache[Any, Any] | None = (
            TTLCache(maxsize=10_000, ttl=cache_s, timer=time.monotonic) if cache_s > 0 else None
        )
        self._backoff = wait_random_exponential(multiplier=backoff_s, max=max(backoff_s * 20, 1.0))
        self.breaker = Breaker(
            failures=breaker_failures,
            recovery_s=breaker_recovery_s,
            counts=lambda exc: isinstance(exc, _Transient),
        )

    @classmethod
    def from_settings(cls, settings: Any, *, mirror: Mirror | None = None) -> HttpOrderSource:
        token = settings.game_api_token
        return cls(
            base_url=settings.game_api_url,
            token=None if token is None else token.get_secret_value(),
            timeout_s=settings.game_api_timeout_s,
            retries=settings.game_api_retries,
            cache_s=settings.game_api_cache_s,
            breaker_failures=settings.game_api_breaker_failures,
            breaker_recovery_s=settings.game_api_breaker_recovery_s,
            max_body_bytes=settings.game_api_max_body_bytes,
            mirror=mirror,
        )

    # -- the wire -------------------------------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            headers = {"Accept": "application/json", "User-Agent": "arca-support-bot"}
            if self._token:
                headers["Authorization"] = f"Bearer {self._token}"
            self._client = httpx.AsyncClient(
                base_url=self.base_url,
                headers=headers,
                timeout=httpx.Timeout(self._timeout),
                transport=self._transport,
                follow_redirects=False,
            )
        return self._client

    async def _attempt(self, path: str, params: dict[str, Any] | None) -> Any:
        async with self.breaker.guard():
            try:
                async with self._http().stream("GET", path, params=params) as response:
                    code = response.status_code
                    if code == 429 or code >= 500:
                        raise _Transient(f"HTTP {code}", _retry_after(response.headers.get("Retry-After")))
                    if code == 404:
                        return _NOT_FOUND
                    if code in (401, 403):
                        raise SourceUnavailable(f"HTTP {code}: the backend refused ARCA_GAME_API_TOKEN")
                    if code != 200:
                        raise SourceUnavailable(f"HTTP {code}")
                    body = await _read_capped(response, self._max_body)
            except httpx.TimeoutException:
                raise _Transient(f"no answer within {self._timeout:g} s") from None
            except httpx.TransportError as exc:
                raise _Transient(f"connection failed ({type(exc).__name__})") from None
        try:
            return json.loads(body)
        except ValueError:
            raise BadData(f"malformed JSON ({body[:40]!r})") from None

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, _Transient) and exc.retry_after is not None:
            return exc.retry_after
        return float(self._backoff(state))

    def _stop(self, state: RetryCallState) -> bool:
        exc = state.outcome.exception() if state.outcome is not None else None
        # A Retry-After longer than a request's timeout is longer than a player should wait: give up now.
        too_long = isinstance(exc, _Transient) and (exc.retry_after or 0) > self._timeout
        return too_long or stop_after_attempt(self._attempts)(state)

    async def _get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        """The parsed JSON of `GET path` (`_NOT_FOUND` for a 404); `SourceUnavailable` otherwise."""
        try:
            async for attempt in AsyncRetrying(
                stop=self._stop, wait=self._wait, retry=retry_if_exception_type(_Transient), reraise=True
            ):
                with attempt:
                    return await self._attempt(path, params)
        except _Transient as exc:
            log.warning("game backend unavailable for GET %s: %s", path, exc.reason)
            raise SourceUnavailable(exc.reason) from None
        except CircuitOpen:
            raise SourceUnavailable("circuit open: the backend failed repeatedly, retrying later") from None
        except BadData as exc:
            log.warning("game backend answer to GET %s refused: %s", path, exc.reason)
            raise SourceUnavailable(f"bad data: {exc.reason}") from None
        except SourceUnavailable as exc:
            log.error("game backend refused GET %s: %s", path, exc.reason)
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _keep(self, orders: list[OrderRecord]) -> None:
        if self._mirror is not None and orders:
            await self._mirror(orders)

    def _valid(self, items: list[Any], *, player_id: str | None, read_at: datetime) -> list[OrderRecord]:
        """The orders of a list that pass validation; each refused one is logged, never shown."""
        out: list[OrderRecord] = []
        for item in items:
            try:
                order = parse_order(item, read_at=read_at)
            except BadData as exc:
                log.warning("game backend order refused: %s", exc.reason)
                continue
            if player_id is not None and order.player_id != player_id:
                log.warning("game backend order %s refused: it belongs to another player", order.id)
                continue
            out.append(order)
        return out

    # -- OrderSource ------------------------------------------------------------------------------------

    async def order(self, order_id: str, *, fresh: bool = False) -> OrderRecord | None:
        key = ("order", order_id)
        if not fresh and self._cache is not None and key in self._cache:
            return self._cache[key]  # type: ignore[no-any-return]
        data = await self._get(f"/orders/{quote(order_id, safe='')}")
        if data is _NOT_FOUND:
            return None
        try:
            order = parse_order(data, read_at=utcnow())
        except BadData as exc:
            log.warning("game backend order %r refused: %s", order_id[:40], exc.reason)
            raise SourceUnavailable(f"bad data: {exc.reason}") from None
        if order.id != order_id:
            log.warning(
                "game backend order refused: asked for %s, it answered another order (%s)",
                order_id[:40],
                order.id,
            )
            raise SourceUnavailable("bad data: the backend answered another order")
        await self._keep([order])
        if self._cache is not None:
            self._cache[key] = order
        return order

    async def player_orders(self, player_id: str, *, limit: int, status: str | None = None) -> PlayerOrders:
        key = ("player", player_id, limit, status)
        if self._cache is not None and key in self._cache:
            return self._cache[key]  # type: ignore[no-any-return]
        asked = PLAYER_WINDOW if status else limit
        data = await self._get(f"/players/{quote(player_id, safe='')}/orders", {"limit": asked})
        if data is _NOT_FOUND:
            return PlayerOrders([], 0)
        try:
            items = order_list(data)
        except BadData as exc:
            log.warning("game backend orders of %s refused: %s", player_id, exc.reason)
            raise SourceUnavailable(f"bad data: {exc.reason}") from None
        orders = self._valid(items, player_id=player_id, read_at=utcnow())
        await self._keep(orders)
        if status:
            orders = [o for o in orders if o.status == status]
        # The API says no total: it is known only when the backend gave fewer than were asked for.
        total = len(orders) if len(items) < asked else None
        page = PlayerOrders(orders[:limit], total)
        if self._cache is not None:
            self._cache[key] = page
        return page

    async def search(
        self, *, statuses: tuple[str, ...] = (), since: datetime | None = None, until: datetime | None = None
    ) -> AsyncIterator[list[OrderRecord]]:
        for status in statuses or (None,):
            cursor: str | None = None
            while True:
                params: dict[str, Any] = {"limit": SEARCH_PAGE}
                if status:
                    params["status"] = status
                if since:
                    params["updated_after"] = since.isoformat()
                if until:
                    params["updated_before"] = until.isoformat()
                if cursor:
                    params["cursor"] = cursor
                data = await self._get("/orders", params)
                if data is _NOT_FOUND:
                    raise SourceUnavailable("the backend offers no order search (GET /orders answered 404)")
                try:
                    items = order_list(data)
                except BadData as exc:
                    raise SourceUnavailable(f"bad data: {exc.reason}") from None
                orders = self._valid(items, player_id=None, read_at=utcnow())
                await self._keep(orders)
                yield orders
                cursor = data.get("next_cursor")
                if not isinstance(cursor, str) or not cursor:
                    break

    async def forget(self, order_id: str) -> None:
        if self._cache is None:
            return
        self._cache.pop(("order", order_id), None)
        for key, page in list(self._cache.items()):
            if key[0] == "player" and any(o.id == order_id for o in page.orders):
                self._cache.pop(key, None)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
