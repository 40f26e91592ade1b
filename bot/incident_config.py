"""The incidents' part of `Settings`: where Discord posts the open incidents' notices (`bot.incidents`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, NoDecode


class IncidentSettings(BaseSettings):
    """Fields `Settings` inherits; read from the environment and `arca.toml` like every other setting."""

    incident_notice_channels: Annotated[list[int], NoDecode] = Field(
        default_factory=list,
        validation_alias=AliasChoices("ARCA_INCIDENT_NOTICE_CHANNELS", "arca_incident_notice_channels"),
    )
    """Support channels that opted in: each open incident's notice is posted there once and edited when
    staff update or close it (comma-separated channel ids; empty: none)."""

    @field_validator("incident_notice_channels", mode="before")
    @classmethod
    def _split_channel_ids(cls, value: Any) -> Any:
        if isinstance(value, int):
            return [value]
        if isinstance(value, str):
            return [p.strip() for p in value.replace(";", ",").split(",") if p.strip()]
        return value
