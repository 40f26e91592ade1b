"""The game's signed events (DESIGN.md §11.3): the signature check (Stripe's scheme), the event body's
shape, and `EventReceiver`, which turns one request into one answer — 200 applied / duplicate / stale,
400 with a reason, 401 for the signature, 429 while a source keeps sending bad link codes.

Written by hand: the scheme is twenty lines of the standard library (`hmac`), and the libraries that
verify Stripe's or Svix's webhooks bind their own header names and payload types.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, StrictInt, ValidationError

from bot.game.linking import LinkGuard, code_hash, looks_like_code
from bot.store import ORDER_STATUSES, Store
from bot.store.game_events import (
    EventRefused,
    OrderFacts,
    apply_event,
    order_event_unit,
    player_event_unit,
    run_event_unit,
)
from bot.store.link_codes import redeem_code

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Arca-Signature"
TOLERANCE_S = 300
"""A signature's `t` may be this many seconds from the bot's clock, either way."""
EVENT_TYPES = ("order.upserted", "player.upserted", "account.link")


# ---- the signature ------------------------------------------------------------------------------


def sign(secret: bytes, timestamp: int, body: bytes) -> str:
    """`v1`: lowercase hex HMAC-SHA256 of `"<t>." + body` under `secret`."""
    return hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_header(secret: bytes, body: bytes, timestamp: int | None = None) -> str:
    """The header value a sender puts on `body`: `t=<unix seconds>,v1=<hex>`."""
    t = int(time.time()) if timestamp is None else timestamp
    return f"t={t},v1={sign(secret, t, body)}"


def check_signature(
    header: str | None, body: bytes, secrets: Sequence[bytes], now: float, tolerance: int = TOLERANCE_S
) -> str | None:
    """None when `header` signs `body` under one of `secrets` within `tolerance` seconds of `now`; else
    the reason (`signature_missing`, `signature_malformed`, `timestamp_out_of_tolerance`,
    `signature_mismatch`). Every candidate is compared in constant time."""
    if not header:
        return "signature_missing"
    timestamp: int | None = None
    candidates: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isascii() and value.isdigit() and len(value) <= 12:
            timestamp = int(value)
        elif key == "v1" and value:
            candidates.append(value)
    if timestamp is None or not candidates:
        return "signature_malformed"
    if abs(now - timestamp) > tolerance:
        return "timestamp_out_of_tolerance"
    matched = False
    for secret in secrets:
        expected = sign(secret, timestamp, body).encode()
        for given in candidates:
            # No early exit: the time taken does not say which secret or candidate came close.
            matched |= hmac.compare_digest(expected, given.encode("utf-8", "replace"))
    return None if matched else "signature_mismatch"


# ---- the body -----------------------------------------------------------------------------------


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("NUL characters are not allowed")  # PostgreSQL refuses them in text
    return value


Text = Annotated[str, AfterValidator(_no_nul)]


class Envelope(BaseModel):
    """`{"id", "type", "created_at", "data"}`; the data is read by type."""

    model_config = ConfigDict(extra="ignore")

    id: Text = Field(min_length=1, max_length=200)
    type: Text = Field(max_length=40)
    created_at: AwareDatetime | None = None
    data: dict[str, Any]


class OrderData(BaseModel):
    """`order.upserted`: an order object of §11.1."""

    model_config = ConfigDict(extra="ignore")

    id: Text = Field(min_length=1, max_length=32)
    player_id: Text = Field(min_length=1, max_length=32)
    status: Literal[tuple(ORDER_STATUSES)]  # type: ignore[valid-type]
    item: Text = Field(max_length=200)
    amount: StrictInt = Field(ge=0)
    currency: Text = Field(default="KRW", min_length=3, max_length=3)
    ordered_at: AwareDatetime
    updated_at: AwareDatetime


class PlayerData(BaseModel):
    """`player.upserted`: who a player is."""

    model_config = ConfigDict(extra="ignore")

    id: Text = Field(min_length=1, max_length=32)
    name: Text = Field(min_length=1, max_length=100)
    locale: Text = Field(default="ko", min_length=2, max_length=8)


class LinkData(BaseModel):
    """`account.link`: the code the player typed in the game, and who they are there."""

    model_config = ConfigDict(extra="ignore")

    code: Text = Field(min_length=1, max_length=64)
    player_id: Text = Field(min_length=1, max_length=32)


def _field_of(exc: ValidationError, prefix: str = "") -> str:
    """The first invalid field's path (`data.updated_at`), never its value."""
    errors = exc.errors()
    loc = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
    return f"{prefix}{loc}" if loc else prefix.rstrip(".") or "body"


# ---- the receiver -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventAnswer:
    """The HTTP answer to one delivery."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


ForgetOrder = Callable[[str], Awaitable[None]]
"""`OrderSource.forget(order_id)`: drop a cached order after an event changed it."""


class EventReceiver:
    """Checks, parses and applies the game's events, each in one transaction.

    `secrets`: the accepted webhook secrets (two during a rotation); `forget_order`: the order source's
    cache invalidation, called after an order event committed; `now`: the wall clock (unix seconds)
    the signature's timestamp is held against; `clock`: the app's clock (link codes' expiry).
    """

    def __init__(
        self,
        store: Store,
        secrets: Sequence[bytes],
        *,
        forget_order: ForgetOrder | None = None,
        link_guard: LinkGuard | None = None,
        now: Callable[[], float] = time.time,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        if not secrets:
            raise ValueError("the event receiver needs at least one secret")
        self.store = store
        self._secrets = tuple(secrets)
        self.forget_order = forget_order
        self.link_guard = link_guard or LinkGuard(store, clock=clock)
        self._now = now
        self._clock = clock

    def __repr__(self) -> str:  # never the secrets
        return f"EventReceiver({len(self._secrets)} secret(s))"

    async def receive(self, body: bytes, signature: str | None, source: str) -> EventAnswer:
        """One delivery: `body` as received (bytes), the signature header, the sender's address."""
        refused = check_signature(signature, body, self._secrets, self._now())
        if refused is not None:
            log.warning("game event refused from %s: %s", source, refused)
            return EventAnswer(401, {"error": refused})
        try:
            envelope = Envelope.model_validate(json.loads(body.decode("utf-8")))
        except (UnicodeError, ValueError, RecursionError) as exc:
            detail = _field_of(exc) if isinstance(exc, ValidationError) else "body"
            return EventAnswer(400, {"error": "malformed_body", "field": detail})
        if envelope.type not in EVENT_TYPES:
            return EventAnswer(400, {"error": "unknown_event_type"})
        try:
            if envelope.type == "order.upserted":
                return await self._order(envelope, OrderData.model_validate(envelope.data))
            if envelope.type == "player.upserted":
                return await self._player(envelope, PlayerData.model_validate(envelope.data))
            return await self._link(envelope, LinkData.model_validate(envelope.data), source)
        except ValidationError as exc:
            return EventAnswer(400, {"error": "malformed_body", "field": _field_of(exc, "data.")})

    async def _order(self, envelope: Envelope, data: OrderData) -> EventAnswer:
        facts = OrderFacts(**data.model_dump())

        now = self._clock()
        outcome = await run_event_unit(self.store, lambda: order_event_unit(envelope.id, facts, now))
        if outcome == "applied" and self.forget_order is not None:
            try:
                await self.forget_order(data.id)
            except Exception:  # the order is stored; a cache that keeps it a little longer is no failure
                log.exception("could not drop order %s from the order source's cache", data.id)
        return EventAnswer(200, {"status": outcome})

    async def _player(self, envelope: Envelope, data: PlayerData) -> EventAnswer:
        now = self._clock()
        outcome = await run_event_unit(
            self.store, lambda: player_event_unit(envelope.id, data.id, data.name, data.locale, now)
        )
        return EventAnswer(200, {"status": outcome})

    async def _link(self, envelope: Envelope, data: LinkData, source: str) -> EventAnswer:
        guard = self.link_guard
        wait = await guard.retry_after(source, data.player_id)
        if wait > 0:
            log.warning("account.link refused: too many bad link codes (source %s)", source)
            seconds = str(max(1, math.ceil(wait)))
            return EventAnswer(429, {"error": "rate_limited"}, {"Retry-After": seconds})
        now = self._clock()
        redeemed: list[Any] = []

        async def apply(session: Any) -> str:
            if not looks_like_code(data.code):
                raise EventRefused("unknown_link_code")
            result = await redeem_code(session, code_hash(data.code), data.player_id, now)
            await self.store.audit(
                actor=f"player:{data.player_id}",
                action="link.self_service",
                thread_id=None,
                target=data.player_id,
                code="OK",
                detail={
                    "discord_id": result.discord_id,
                    "event_id": envelope.id,
                    "moved_from_player": result.change.moved_from,
                    "replaced_discord_id": result.change.replaced_discord_id,
                },
                session=session,
            )
            redeemed.append(result)
            return "applied"

        try:
            outcome = await apply_event(self.store, envelope.id, envelope.type, apply, now=now)
        except EventRefused as refused:
            await guard.failed(source, data.player_id)
            await self.store.audit(
                actor=f"player:{data.player_id}",
                action="link.refused",
                target=data.player_id,
                code="REFUSED",
                detail={"reason": refused.reason, "event_id": envelope.id, "source": source},
            )
            return EventAnswer(400, {"error": refused.reason})
        return EventAnswer(200, {"status": outcome})
