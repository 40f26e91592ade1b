"""The web channel's part of `Settings` (see bot/serving/web): where it binds, who may call it, the
player-token key, public links, rate limits, trusted proxies and the operator's debug view."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode

from bot.config.values import blank_is_none, env, list_items, split_list


class WebSettings(BaseSettings):
    web_host: str = Field(default="127.0.0.1", validation_alias=env("ARCA_WEB_HOST"))
    """Address the web channel binds; loopback unless the operator opens it."""
    web_port: int | None = Field(default=None, ge=0, le=65_535, validation_alias=env("ARCA_WEB_PORT"))
    """`arca-bot run` serves the web channel beside Discord only when set; `arca-bot web` defaults to 8080."""
    web_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, validation_alias=env("ARCA_WEB_ORIGINS")
    )
    """Origins allowed to call the API from another site (CORS), e.g. `https://arca.example.com`."""
    web_secret: SecretStr | None = Field(default=None, validation_alias=env("ARCA_WEB_SECRET"))
    """HS256 key the game's server signs player tokens with (and the anonymous-visitor cookie)."""
    web_public_url: str | None = Field(default=None, validation_alias=env("ARCA_WEB_PUBLIC_URL"))
    """Base of links the bot prints, e.g. `https://support.arca.example.com`."""
    web_rate_limit: int = Field(default=20, ge=1, validation_alias=env("ARCA_WEB_RATE_LIMIT"))
    """Messages one identity may send per `web_rate_window`."""
    web_rate_limit_ip: int = Field(default=60, ge=1, validation_alias=env("ARCA_WEB_RATE_LIMIT_IP"))
    """Messages the anonymous visitors of one IP address may send per `web_rate_window`, together."""
    web_rate_limit_ip_signed: int = Field(
        default=600, ge=1, validation_alias=env("ARCA_WEB_RATE_LIMIT_IP_SIGNED")
    )
    """Messages the signed-in players of one IP address (a PC방, a carrier's NAT) may send per
    `web_rate_window`, together; each is also held to `web_rate_limit` on their own."""
    web_rate_window: float = Field(
        default=60.0, gt=0, le=86_400, allow_inf_nan=False, validation_alias=env("ARCA_WEB_RATE_WINDOW")
    )
    """Seconds of the rate-limit window."""
    web_trusted_proxies: Annotated[list[str], NoDecode] = Field(
        default_factory=list, validation_alias=env("ARCA_WEB_TRUSTED_PROXIES")
    )
    """Proxies whose `X-Forwarded-For` names the client (addresses or networks, e.g. `10.0.0.5`); none
    by default: a client's own forwarded header is never believed."""
    web_debug: bool = Field(default=False, validation_alias=env("ARCA_WEB_DEBUG"))
    """Let the widget show each step's tool name, arguments, result and the run's figures when its
    address carries `#debug=1` (for operators; players see plain status lines)."""

    @field_validator("web_trusted_proxies", mode="before")
    @classmethod
    def _split_proxies(cls, value: Any) -> Any:
        return split_list(value) if isinstance(value, str) else value

    @field_validator("web_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [origin.rstrip("/") for origin in list_items(value)]
        return value

    @field_validator("web_port", "web_public_url", mode="before")
    @classmethod
    def _blank_web_value_is_none(cls, value: Any) -> Any:
        return blank_is_none(value)
