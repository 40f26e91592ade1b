"""`Settings`: every part together, read from the environment and `arca.toml`, and `load_settings`, which
turns any invalid value into one `ConfigError` line naming the variable (never its value)."""

from __future__ import annotations

import re
import tomllib
from typing import Any

from pydantic import AliasChoices, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from bot.config.attachments import AttachmentSettings
from bot.config.conversation import ConversationSettings
from bot.config.desk import DeskSettings
from bot.config.discord_channel import DiscordSettings
from bot.config.game import GameSettings
from bot.config.incidents import IncidentSettings
from bot.config.models import ModelSettings
from bot.config.operations import OperationsSettings
from bot.config.simulation import SimulationSettings
from bot.config.sources import ConfigError, config_file
from bot.config.storage import StorageSettings
from bot.config.web import WebSettings
from bot.redaction import redact_urls
from bot.yaml_files import first_error


class _EnvByDocumentedNames(EnvSettingsSource):
    """The environment, read under each setting's documented names only (`ARCA_STAFF_ROLE`, any case):
    `populate_by_name` would also read the field name, so a container's generic `LOG_LEVEL`, `TIMEZONE`
    or `MODEL` would configure the bot unasked. Keyword arguments and arca.toml still take field names."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        value, key, is_complex = super().get_field_value(field, field_name)
        alias = field.validation_alias
        if value is not None and isinstance(alias, AliasChoices):
            documented = {c.lower() for c in alias.choices if isinstance(c, str)}
            if key.lower() not in documented:
                return None, key, is_complex
        return value, key, is_complex


class Settings(
    SimulationSettings,
    GameSettings,
    WebSettings,
    OperationsSettings,
    ConversationSettings,
    DiscordSettings,
    StorageSettings,
    ModelSettings,
    AttachmentSettings,
    IncidentSettings,
    DeskSettings,
):
    """Everything the operator can set. Secrets are `SecretStr` so they never print. The parts are listed
    last-first: pydantic orders the fields from the last base to the first."""

    model_config = SettingsConfigDict(
        env_file=None,
        extra="ignore",
        case_sensitive=False,
        populate_by_name=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_path = config_file()
        sources: list[PydanticBaseSettingsSource] = [init_settings, _EnvByDocumentedNames(settings_cls)]
        if toml_path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_path))
        return tuple(sources)


_FIELD_TO_ENV = {
    "discord_token": "DISCORD_TOKEN",
    "openai_api_key": "OPENAI_API_KEY",
    "openai_base_url": "OPENAI_BASE_URL",
    "model": "ARCA_MODEL",
}


def _env_name(field: str) -> str:
    if field in _FIELD_TO_ENV:
        return _FIELD_TO_ENV[field]
    info = Settings.model_fields.get(field)
    if info is not None and isinstance(info.validation_alias, AliasChoices):
        first = info.validation_alias.choices[0]
        if isinstance(first, str):
            return first
    return field


def load_settings(**overrides: Any) -> Settings:
    """Build the settings, turning any validation failure into one clear `ConfigError` line."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        loc, msg = first_error(exc)
        loc = loc or ("?",)
        name = ".".join(str(p) for p in loc) if loc[0] == "models" else _env_name(str(loc[0]))
        # Never the value: a secret pasted into the wrong variable must not reach the screen or a log.
        raise ConfigError(f"{name}: {redact_urls(msg)}") from None
    except SettingsError as exc:
        match = re.search(r'field "(\w+)"', str(exc))
        if match:
            raise ConfigError(f"{_env_name(match.group(1))}: cannot parse the value") from None
        raise ConfigError("configuration: cannot read the settings") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{config_file()}: invalid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{config_file()}: invalid TOML: not UTF-8 text") from None
    except OSError as exc:  # an unreadable arca.toml
        raise ConfigError(f"{config_file()}: cannot read: {exc.strerror or exc}") from None
