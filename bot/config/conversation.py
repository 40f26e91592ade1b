"""The conversation part of `Settings`: the players' time zone, how long and how far one run may go,
the fact check, how answers stream and how long a message may be, and when a conversation ends (for
the support analytics, see bot/analytics/stats.py)."""

from __future__ import annotations

from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings

from bot.config.values import env

MAX_MESSAGE_CHARS_LIMIT = 100_000
"""The most `ARCA_MAX_MESSAGE_CHARS` may allow (the console's own cap on one message)."""


class ConversationSettings(BaseSettings):
    timezone: str = Field(default="Asia/Seoul", validation_alias=env("ARCA_TIMEZONE"))
    """IANA time zone of the calendar days of the daily coupon caps, staff hours and the dashboard."""
    max_iterations: int = Field(default=50, ge=1, le=500, validation_alias=env("ARCA_MAX_ITERATIONS"))
    """Tool-loop iterations before the fallback answer."""
    run_budget_s: float = Field(default=90.0, gt=0, le=3600, validation_alias=env("ARCA_RUN_BUDGET_S"))
    """Seconds one run's tool loop may take before the player gets the fallback answer."""
    fact_check: Literal["enforce", "observe"] = Field(
        default="enforce", validation_alias=env("ARCA_FACT_CHECK")
    )
    """`enforce`: an answer sentence with an unbacked fact is replaced; `observe`: only logged and counted
    (to measure the bot without the fact check)."""
    edit_interval: float = Field(
        default=1.0, ge=0.0, le=60.0, allow_inf_nan=False, validation_alias=env("ARCA_EDIT_INTERVAL")
    )
    """Seconds between edits of one streaming message (Discord rate-limits edits)."""
    max_message_chars: int = Field(
        default=4_000, ge=100, le=MAX_MESSAGE_CHARS_LIMIT, validation_alias=env("ARCA_MAX_MESSAGE_CHARS")
    )
    """Longest player message accepted; longer ones get a clear refusal."""
    conversation_idle_minutes: int = Field(
        default=30, ge=1, le=10_080, validation_alias=env("ARCA_CONVERSATION_IDLE_MINUTES")
    )
    """A player's conversation in a thread ends after this many minutes without a message (DESIGN §7)."""
    resolution_window_minutes: int = Field(
        default=60, ge=1, le=10_080, validation_alias=env("ARCA_RESOLUTION_WINDOW_MINUTES")
    )
    """A conversation is resolved by the bot when no escalation or staff action follows its last
    answer within this many minutes."""

    @field_validator("timezone")
    @classmethod
    def _valid_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError("expected an IANA time zone such as Asia/Seoul") from exc
        return value

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)
