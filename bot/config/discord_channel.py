"""The Discord part of `Settings`: the token, where the bot listens, the staff role and channel, and
which shards this process runs (see bot/sharding.py)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode

from bot.config.values import blank_is_none, env, split_list


class DiscordSettings(BaseSettings):
    discord_token: SecretStr | None = Field(default=None, validation_alias=env("DISCORD_TOKEN"))
    """Bot token from the Discord developer portal (a secret); unset: no Discord."""
    staff_role: str = Field(
        default="Support Staff", min_length=1, max_length=100, validation_alias=env("ARCA_STAFF_ROLE")
    )
    """Discord role allowed to run staff commands and press staff buttons."""
    staff_channel: int | None = Field(default=None, validation_alias=env("ARCA_STAFF_CHANNEL"))
    """Channel id where escalations and coupon approval requests are posted."""
    support_channels: Annotated[list[int], NoDecode] = Field(
        default_factory=list, validation_alias=env("ARCA_SUPPORT_CHANNELS")
    )
    """Channel ids answered without a mention (elsewhere the bot answers when mentioned)."""
    allow_dms: bool = Field(default=False, validation_alias=env("ARCA_ALLOW_DMS"))
    """Answer direct messages (`dm:<user id>` conversations)."""
    guild_ids: Annotated[list[int], NoDecode] = Field(
        default_factory=list, validation_alias=env("ARCA_GUILD_IDS")
    )
    """Guilds the staff slash commands are synced to (at once); unset: global sync (up to an hour)."""
    shard_count: int | None = Field(default=None, ge=1, le=10_000, validation_alias=env("ARCA_SHARD_COUNT"))
    """Total Discord shards across every bot process; None lets discord.py pick (one process)."""
    shard_ids: Annotated[list[int], NoDecode] = Field(
        default_factory=list, validation_alias=env("ARCA_SHARD_IDS")
    )
    """The shards this process runs, e.g. `0,1`; empty means all of `shard_count`."""

    @field_validator("support_channels", "guild_ids", "shard_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: Any) -> Any:
        return split_list(value)

    @field_validator("shard_count", "staff_channel", mode="before")
    @classmethod
    def _blank_discord_value_is_none(cls, value: Any) -> Any:
        return blank_is_none(value)

    @field_validator("shard_ids")
    @classmethod
    def _shards_in_range(cls, value: list[int], info: ValidationInfo) -> list[int]:
        # A field validator (not a model one) so the error names ARCA_SHARD_IDS and shows only its value.
        # Checked here so a wrong deployment fails at start-up with one line, before Discord is contacted.
        count = info.data.get("shard_count")
        if value and count is None:
            raise ValueError("needs ARCA_SHARD_COUNT (the total number of shards) as well")
        bad = [i for i in value if count is not None and not 0 <= i < count]
        if bad:
            raise ValueError(f"shard id {bad[0]} is outside 0..{count - 1} (ARCA_SHARD_COUNT={count})")
        if len(set(value)) != len(value):
            raise ValueError("lists a shard twice")
        return value

    @field_validator("staff_role", mode="before")
    @classmethod
    def _strip_role(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value
