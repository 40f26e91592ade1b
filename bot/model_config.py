"""One named model of the `ModelRegistry` as the operator declares it in `arca.toml` (`[models.NAME]`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

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
