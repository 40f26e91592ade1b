"""The support desk's part of `Settings`: staff hours, holidays and SLA targets (`bot.desk`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode

from bot.config.values import blank_is_none, env, split_list


class DeskSettings(BaseSettings):
    """Fields `Settings` inherits; read from the environment and `arca.toml` like every other setting."""

    support_hours: str = Field(default="", validation_alias=env("ARCA_SUPPORT_HOURS"))
    """Staff hours in `ARCA_TIMEZONE`, e.g. `mon-fri 10:00-19:00; sat 10:00-14:00` or `월-금 10:00-19:00`;
    a window may run past midnight (`fri 22:00-06:00`); empty: always in (docs/staff-hours.md)."""
    support_holidays: Path | None = Field(default=None, validation_alias=env("ARCA_SUPPORT_HOLIDAYS"))
    """A file of dates staff are away (`YYYY-MM-DD` a line)."""
    sla_first_response_minutes: int = Field(
        default=60, ge=1, le=43_200, validation_alias=env("ARCA_SLA_FIRST_RESPONSE_MINUTES")
    )
    """A person answers an escalation within this many minutes (a takeover or a console reply)."""
    sla_resolution_minutes: int = Field(
        default=1440, ge=1, le=43_200, validation_alias=env("ARCA_SLA_RESOLUTION_MINUTES")
    )
    """An escalation is handed back to the bot (resolved) within this many minutes."""
    sla_warn_minutes: int = Field(default=10, ge=0, le=1440, validation_alias=env("ARCA_SLA_WARN_MINUTES"))
    """Staff are reminded this many minutes before a target is missed."""
    escalation_idle_close_hours: float = Field(
        default=48, gt=0, le=720, validation_alias=env("ARCA_ESCALATION_IDLE_CLOSE_HOURS")
    )
    """An escalated conversation the player left silent this long is closed with a notice."""

    ticket_channels: Annotated[list[int], NoDecode] = Field(
        default_factory=list, validation_alias=env("ARCA_TICKET_CHANNELS")
    )
    """Channels where a player's first message opens a ticket: a private thread (text channel) or the
    player's own post (forum), answered without a mention (`bot.players.discord_app.tickets`)."""
    ticket_idle_close_hours: float = Field(
        default=24, gt=0, le=720, validation_alias=env("ARCA_TICKET_IDLE_CLOSE_HOURS")
    )
    """A ticket thread nobody wrote in for this long (and not waiting for staff) is closed and archived."""

    @field_validator("ticket_channels", mode="before")
    @classmethod
    def _split_ticket_channels(cls, value: Any) -> Any:
        return split_list(value)

    @field_validator("support_holidays", mode="before")
    @classmethod
    def _blank_means_no_file(cls, value: Any) -> Any:
        return blank_is_none(value)
