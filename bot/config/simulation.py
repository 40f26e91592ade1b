"""The simulations' part of `Settings` (`arca-bot simulate`): the simulated player's model, configured
apart from the bot's (any OpenAI-compatible endpoint), and how many runs go at once."""

from __future__ import annotations

from typing import Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings

from bot.config.values import blank_is_none, env


class SimulationSettings(BaseSettings):
    """Fields `Settings` inherits; read from the environment and `arca.toml` like every other setting."""

    sim_model: str | None = Field(default=None, validation_alias=env("ARCA_SIM_MODEL"))
    """The simulated player's model name; unset: scenarios need their `player.turns` (a scripted player)."""
    sim_base_url: str | None = Field(default=None, validation_alias=env("ARCA_SIM_BASE_URL"))
    """Its OpenAI-compatible endpoint (default: the bot's `OPENAI_BASE_URL`)."""
    sim_api_key: SecretStr | None = Field(default=None, validation_alias=env("ARCA_SIM_API_KEY"))
    """Its key (default: the bot's `OPENAI_API_KEY`); never printed."""
    sim_max_turns: int = Field(default=8, ge=1, le=50, validation_alias=env("ARCA_SIM_MAX_TURNS"))
    """Player messages in one run at most, when the scenario does not say."""
    sim_parallel: int = Field(default=2, ge=1, le=64, validation_alias=env("ARCA_SIM_PARALLEL"))
    """Runs at once (each in its own database)."""

    @field_validator("sim_model", "sim_base_url", "sim_api_key", mode="before")
    @classmethod
    def _blank_sim_value_is_none(cls, value: Any) -> Any:
        return blank_is_none(value)
