"""The attachments' part of `Settings`: how large a file a player may attach (`bot.attachments`)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings

from bot.config.values import env


class AttachmentSettings(BaseSettings):
    """Fields `Settings` inherits; read from the environment and `arca.toml` like every other setting."""

    attachment_max_bytes: int = Field(
        default=8 * 1024 * 1024,
        ge=1024,
        le=100 * 1024 * 1024,
        validation_alias=env("ARCA_ATTACHMENT_MAX_BYTES"),
    )
    """The largest screenshot or text file a player may attach (bytes); larger ones are refused with a reply."""
    attachment_unsent_files: int = Field(
        default=20, ge=1, le=1000, validation_alias=env("ARCA_ATTACHMENT_UNSENT_FILES")
    )
    """Uploads one sender (a signed-in player, an anonymous visitor) may keep waiting for their message."""
    attachment_unsent_bytes: int = Field(
        default=128 * 1024 * 1024,
        ge=1024,
        le=10 * 1024 * 1024 * 1024,
        validation_alias=env("ARCA_ATTACHMENT_UNSENT_BYTES"),
    )
    """Their bytes together; an upload past either limit is refused with a reply."""
    attachment_unsent_minutes: int = Field(
        default=60, ge=1, le=7 * 24 * 60, validation_alias=env("ARCA_ATTACHMENT_UNSENT_MINUTES")
    )
    """An upload no message took within this many minutes is deleted (checked every few minutes)."""
    attachment_address_bytes: int = Field(
        default=256 * 1024 * 1024,
        ge=1024,
        le=100 * 1024 * 1024 * 1024,
        validation_alias=env("ARCA_ATTACHMENT_ADDRESS_BYTES"),
    )
    """Bytes the anonymous visitors of one address may upload per `attachment_unsent_minutes`, together
    (new visitors are cheap to make; signed-in players are held to their own limits)."""
    attachment_max_pixels: int = Field(
        default=40_000_000,
        ge=100_000,
        le=150_000_000,  # below Pillow's own decompression-bomb refusal (about 179 million)
        validation_alias=env("ARCA_ATTACHMENT_MAX_PIXELS"),
    )
    """The largest image, width × height, read from the file's header before anything is decoded; larger
    ones (a decompression bomb is a small file claiming billions) are refused with a reply."""
