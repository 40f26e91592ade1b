"""The incidents' part of `Settings`: where Discord posts the open incidents' notices (`bot.incidents`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode

from bot.config.values import env, split_list


class IncidentSettings(BaseSettings):
    """Fields `Settings` inherits; read from the environment and `arca.toml` like every other setting."""

    incident_notice_channels: Annotated[list[int], NoDecode] = Field(
        default_factory=list,
        validation_alias=env("ARCA_INCIDENT_NOTICE_CHANNELS"),
    )
    """Support channels that opted in: each open incident's notice is posted there once and edited when
    staff update or close it (comma-separated channel ids; empty: none)."""

    @field_validator("incident_notice_channels", mode="before")
    @classmethod
    def _split_channel_ids(cls, value: Any) -> Any:
        return split_list(value)
