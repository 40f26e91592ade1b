"""The attachments' part of `Settings`: how large a file a player may attach (`bot.attachments`)."""

from __future__ import annotations

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings


def _env(name: str) -> AliasChoices:
    """The env var name (any case) and the lowercase field name in arca.toml, as in `bot.config`."""
    return AliasChoices(name, name.lower())


class AttachmentSettings(BaseSettings):
    """Fields `Settings` inherits; read from the environment and `arca.toml` like every other setting."""

    attachment_max_bytes: int = Field(
        default=8 * 1024 * 1024,
        ge=1024,
        le=100 * 1024 * 1024,
        validation_alias=_env("ARCA_ATTACHMENT_MAX_BYTES"),
    )
    """The largest screenshot or text file a player may attach (bytes); larger ones are refused with a reply."""
