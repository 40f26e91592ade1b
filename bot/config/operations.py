"""The operations part of `Settings`: log level and format, and the Prometheus endpoint (see
bot/observability/)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings

from bot.config.values import blank_is_none, env, lowercase_choice


class OperationsSettings(BaseSettings):
    log_level: str = Field(default="INFO", validation_alias=env("ARCA_LOG_LEVEL"))
    """`DEBUG` … `CRITICAL`; logs go to stderr (`chat` and `demo` show WARNING and up unless it is set)."""
    metrics_port: int | None = Field(default=None, ge=1, le=65_535, validation_alias=env("ARCA_METRICS_PORT"))
    """Serve Prometheus `/metrics` on this port (127.0.0.1 unless ARCA_METRICS_HOST); None: no endpoint."""
    metrics_host: str = Field(default="127.0.0.1", validation_alias=env("ARCA_METRICS_HOST"))
    """Address the metrics endpoint binds to (it has no authentication)."""
    log_format: Literal["text", "json"] = Field(default="text", validation_alias=env("ARCA_LOG_FORMAT"))
    """`json`: one JSON object per log line with thread_id / run_id / tool / code (bot/observability/)."""

    @field_validator("log_level")
    @classmethod
    def _valid_level(cls, value: str) -> str:
        level = value.upper()
        if level not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError("expected one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
        return level

    @field_validator("metrics_port", mode="before")
    @classmethod
    def _blank_metrics_port_is_none(cls, value: Any) -> Any:
        return blank_is_none(value)

    @field_validator("log_format", mode="before")
    @classmethod
    def _lower_format(cls, value: Any) -> Any:
        return lowercase_choice(value)
