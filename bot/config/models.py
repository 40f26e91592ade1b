"""The model part of `Settings`: the OpenAI-compatible endpoint, the main and fast models and their
declared abilities, extra named models from arca.toml (`ModelConfig`, one `[models.NAME]` table), and
how the bot calls them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings

from bot.config.values import blank_is_none, env
from bot.guard_rules import Quirks


class ModelConfig(BaseModel):
    """One named model of the `ModelRegistry`. Abilities are declared, never guessed from the name."""

    model_config = ConfigDict(extra="forbid")

    model: str
    """The model name sent to the endpoint, e.g. `gpt-4o-mini` or `qwen2.5:7b`."""
    base_url: str | None = None
    """OpenAI-compatible endpoint; None means the global `OPENAI_BASE_URL` (or OpenAI itself)."""
    api_key: SecretStr | None = None
    """Key for this endpoint; None means the global `OPENAI_API_KEY`."""
    roles: list[str] = Field(default_factory=list)
    """Roles this model serves: `main`, `fast`."""
    tool_call: bool = True
    """The endpoint supports native function calling (`tools` / `tool_calls`)."""
    vision: bool = False
    """The endpoint accepts images as `image_url` content parts (`ARCA_MODEL_VISION`)."""
    json_mode: bool = True
    """The endpoint supports `response_format={"type": "json_object"}`."""
    streaming: bool = True
    """The endpoint supports `stream=True`."""
    context_window: int = Field(default=32_000, ge=1_000)
    """Tokens the model accepts; the ContextGuard budgets against it."""

    quirks: dict[str, str] = Field(default_factory=dict)
    """How the guards' quirk rules run for this model (`bot.guard_rules.QUIRKS`): `{all = "off"}`,
    `{voice = "observe", example_values = "off"}`; unset quirks are enforced. `ARCA_QUIRKS` goes on top."""

    @field_validator("quirks")
    @classmethod
    def _known_quirks(cls, value: dict[str, str]) -> dict[str, str]:
        Quirks.parse(value)  # raises with the known names and modes
        return value

    def abilities(self) -> dict[str, Any]:
        return {
            "tool_call": self.tool_call,
            "vision": self.vision,
            "json_mode": self.json_mode,
            "streaming": self.streaming,
            "context_window": self.context_window,
        }


class ModelSettings(BaseSettings):
    openai_api_key: SecretStr | None = Field(default=None, validation_alias=env("OPENAI_API_KEY"))
    """Key for the OpenAI-compatible endpoint (a secret)."""
    openai_base_url: str | None = Field(default=None, validation_alias=env("OPENAI_BASE_URL"))
    """Any OpenAI-compatible server (vLLM, Ollama, llama.cpp server, LM Studio); unset: OpenAI."""
    model: str | None = Field(default=None, validation_alias=env("ARCA_MODEL"))
    """Model name for the `main` role, e.g. `gpt-4o-mini` or `qwen2.5:7b-instruct`; unset: no LLM (the scripted demo)."""
    fast_model: str | None = Field(default=None, validation_alias=env("ARCA_FAST_MODEL"))
    """Model for the `fast` role (tool selection, compaction); unset: the main model."""
    model_tool_call: bool = Field(default=True, validation_alias=env("ARCA_MODEL_TOOL_CALL"))
    """The model declares native tool calls (never guessed from its name); `false`: JSON mode."""
    model_vision: bool = Field(default=False, validation_alias=env("ARCA_MODEL_VISION"))
    """The configured model accepts images (`vision`): screenshots go to it as image parts."""
    model_json_mode: bool = Field(default=True, validation_alias=env("ARCA_MODEL_JSON_MODE"))
    """The endpoint accepts `response_format={"type": "json_object"}` (a grammar-constrained reply)."""
    model_streaming: bool = Field(default=True, validation_alias=env("ARCA_MODEL_STREAMING"))
    """The endpoint streams answers."""
    model_context_window: int = Field(
        default=32_000, ge=1_000, validation_alias=env("ARCA_MODEL_CONTEXT_WINDOW")
    )
    """Tokens the model accepts; the context guard compacts the history to fit."""
    models: dict[str, ModelConfig] = Field(default_factory=dict)
    """Extra named models from arca.toml (`[models.NAME]` tables)."""
    quirks: str | None = Field(default=None, validation_alias=env("ARCA_QUIRKS"))
    """The guards' quirk modes for the configured model, on top of its `[models.*]` `quirks`: `observe`
    (every quirk), `voice=off,example_values=observe` (`bot.guard_rules`)."""
    llm_concurrency: int = Field(default=8, ge=1, le=1000, validation_alias=env("ARCA_LLM_CONCURRENCY"))
    """Conversations calling the LLM at once."""
    llm_timeout: float = Field(
        default=60.0, gt=0, le=3600, allow_inf_nan=False, validation_alias=env("ARCA_LLM_TIMEOUT")
    )
    """Seconds one LLM call may take."""
    llm_max_retries: int = Field(default=2, ge=0, le=10, validation_alias=env("ARCA_LLM_MAX_RETRIES"))
    """Retries of a failed LLM call."""

    @field_validator("openai_base_url", "model", mode="before")
    @classmethod
    def _blank_model_value_is_none(cls, value: Any) -> Any:
        return blank_is_none(value)

    @field_validator("quirks")
    @classmethod
    def _known_quirks(cls, value: str | None) -> str | None:
        Quirks.parse(value)  # raises with the known names and modes
        return value

    def guard_quirks(self) -> Quirks:
        """The quirk modes for the model that answers players (the `main` role), `ARCA_QUIRKS` on top."""
        main = next((m for m in self.model_configs().values() if "main" in m.roles), None)
        table = Quirks.parse(main.quirks) if main is not None else Quirks()
        return table.merged(Quirks.parse(self.quirks))

    @property
    def llm_configured(self) -> bool:
        """A real model is configured (a model name and either a key or a custom endpoint)."""
        return bool(self.model or self.models) and bool(
            self.openai_api_key or self.openai_base_url or any(m.base_url for m in self.models.values())
        )

    def model_configs(self) -> dict[str, ModelConfig]:
        """Named models: `main` (and `fast`) from the env vars, plus `[models.*]` from arca.toml."""
        configs: dict[str, ModelConfig] = {}
        if self.model:
            configs["main"] = ModelConfig(
                model=self.model,
                roles=["main"] + ([] if self.fast_model else ["fast"]),
                tool_call=self.model_tool_call,
                vision=self.model_vision,
                json_mode=self.model_json_mode,
                streaming=self.model_streaming,
                context_window=self.model_context_window,
            )
        if self.fast_model:
            configs["fast"] = ModelConfig(
                model=self.fast_model,
                roles=["fast"],
                tool_call=self.model_tool_call,
                vision=self.model_vision,
                json_mode=self.model_json_mode,
                streaming=self.model_streaming,
                context_window=self.model_context_window,
            )
        configs.update(self.models)
        return configs
