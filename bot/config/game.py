"""The game connection's part of `Settings` (DESIGN.md §11): where orders are read, whether coupons are
delivered into the game, the studio's API and its token, and the secret of the events it signs."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings

from bot.config.values import blank_is_none, env, lowercase_choice


class GameSettings(BaseSettings):
    """Fields `Settings` inherits; read from the environment and `arca.toml` like every other setting."""

    order_source: Literal["builtin", "http"] = Field(
        default="builtin", validation_alias=env("ARCA_ORDER_SOURCE")
    )
    """`builtin`: the embedded orders table (demo seed, imports, signed events); `http`: the studio's API."""
    game_api_url: str | None = Field(default=None, validation_alias=env("ARCA_GAME_API_URL"))
    """Base URL of the studio's backend (no trailing slash), e.g. `https://game.example/arca/v1`."""
    game_api_token: SecretStr | None = Field(default=None, validation_alias=env("ARCA_GAME_API_TOKEN"))
    """Sent as `Authorization: Bearer …`; never printed."""
    game_api_timeout_s: float = Field(
        default=3.0, gt=0, le=60, validation_alias=env("ARCA_GAME_API_TIMEOUT_S")
    )
    """Per-request timeout, in seconds."""
    coupon_delivery: Literal["none", "game"] = Field(
        default="none", validation_alias=env("ARCA_COUPON_DELIVERY")
    )
    """`none`: the player redeems the code in game (the ledger is the truth); `game`: each coupon is
    granted into the game through `POST {base}/grants`, exactly once."""
    game_webhook_secret: SecretStr | None = Field(
        default=None, validation_alias=env("ARCA_GAME_WEBHOOK_SECRET")
    )
    """The secret of the game's signed events (two comma-separated during a rotation); unset: the event
    endpoint is off."""

    # -- game-source: how the bot reads the studio's orders (bot/game/orders) -----------------------
    game_api_retries: int = Field(default=2, ge=0, le=5, validation_alias=env("ARCA_GAME_API_RETRIES"))
    """Retries of an order read after a 5xx, a timeout or a 429 (with backoff and jitter); 0: none."""
    game_api_cache_s: float = Field(
        default=30.0, ge=0, le=3600, validation_alias=env("ARCA_GAME_API_CACHE_S")
    )
    """How long an order read stays cached for lookups (0: no cache); eligibility reads never use it."""
    game_api_breaker_failures: int = Field(
        default=5, ge=1, le=1000, validation_alias=env("ARCA_GAME_API_BREAKER_FAILURES")
    )
    """Failed requests in a row after which the bot stops calling the backend for a while."""
    game_api_breaker_recovery_s: float = Field(
        default=15.0, gt=0, le=3600, validation_alias=env("ARCA_GAME_API_BREAKER_RECOVERY_S")
    )
    """How long the bot fails fast before one probe request tries the backend again."""
    game_api_max_body_bytes: int = Field(
        default=1_048_576, ge=1024, le=64 * 1_048_576, validation_alias=env("ARCA_GAME_API_MAX_BODY_BYTES")
    )
    """A longer answer is refused as bad data (read no further than this)."""

    @field_validator("game_api_url", "game_api_token", "game_webhook_secret", mode="before")
    @classmethod
    def _blank_game_value_is_none(cls, value: Any) -> Any:
        return blank_is_none(value)

    @field_validator("order_source", "coupon_delivery", mode="before")
    @classmethod
    def _lowercase_choice(cls, value: Any) -> Any:
        return lowercase_choice(value)

    @field_validator("game_api_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @model_validator(mode="after")
    def _api_needed(self) -> GameSettings:
        if (self.order_source == "http" or self.coupon_delivery == "game") and not self.game_api_url:
            raise ValueError(
                "ARCA_GAME_API_URL is required when ARCA_ORDER_SOURCE=http or ARCA_COUPON_DELIVERY=game"
            )
        return self

    @property
    def webhook_secrets(self) -> list[bytes]:
        """The accepted event secrets (one, or two during a rotation)."""
        if self.game_webhook_secret is None:
            return []
        raw = self.game_webhook_secret.get_secret_value()
        return [s.strip().encode() for s in raw.split(",") if s.strip()]

    # -- game-delivery: the outbox worker's caps (bot/game/delivery) ----------------------------------

    game_delivery_rate: float = Field(
        default=1000.0, gt=0, le=100_000, validation_alias=env("ARCA_GAME_DELIVERY_RATE")
    )
    """At most this many grant and revoke posts per second from one process (an incident's 10,000-grant
    wave is spread out to protect the game's backend)."""
    game_delivery_concurrency: int = Field(
        default=32, ge=1, le=1000, validation_alias=env("ARCA_GAME_DELIVERY_CONCURRENCY")
    )
    """At most this many posts in flight at once from one process."""
    game_delivery_lease_s: float = Field(
        default=60.0, gt=0, le=3600, validation_alias=env("ARCA_GAME_DELIVERY_LEASE_S")
    )
    """How long a process holds the jobs it took; a process that died leaves them to others after this."""
    game_delivery_max_attempts: int = Field(
        default=25, ge=1, le=10_000, validation_alias=env("ARCA_GAME_DELIVERY_MAX_ATTEMPTS")
    )
    """Posts of one job that failed for a passing reason (5xx, timeout, 429) before it is a dead letter."""
    game_delivery_backoff_max_s: float = Field(
        default=600.0, gt=0, le=86_400, validation_alias=env("ARCA_GAME_DELIVERY_BACKOFF_MAX_S")
    )
    """The longest wait between two attempts (exponential backoff from 1 s, with jitter)."""
