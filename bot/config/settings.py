"""Settings: environment variables plus an optional `arca.toml` (DESIGN.md §10).

An invalid value fails at start-up with one line naming the variable and what is expected
(`ConfigError`), never a traceback deep inside the bot.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from bot.desk_config import DeskSettings
from bot.model_config import ModelConfig
from bot.redaction import redact_urls
from bot.yaml_files import first_error

__all__ = ["ConfigError", "ModelConfig", "Settings", "config_file", "load_settings"]

CONFIG_FILE_ENV = "ARCA_CONFIG"
DEFAULT_CONFIG_FILE = "arca.toml"
MAX_MESSAGE_CHARS_LIMIT = 100_000
"""The most `ARCA_MAX_MESSAGE_CHARS` may allow (the console's own cap on one message)."""


class ConfigError(Exception):
    """A configuration value is missing or invalid; the message is one line for the operator."""


def _env(*names: str) -> AliasChoices:
    """Accept the env var name (any case) and the lowercase field name in arca.toml."""
    return AliasChoices(*names, *(n.lower() for n in names))


class Settings(DeskSettings):
    """Everything the operator can set. Secrets are `SecretStr` so they never print."""

    model_config = SettingsConfigDict(
        env_file=None,
        extra="ignore",
        case_sensitive=False,
        populate_by_name=True,
    )

    discord_token: SecretStr | None = Field(default=None, validation_alias=_env("DISCORD_TOKEN"))
    openai_api_key: SecretStr | None = Field(default=None, validation_alias=_env("OPENAI_API_KEY"))
    openai_base_url: str | None = Field(default=None, validation_alias=_env("OPENAI_BASE_URL"))
    model: str | None = Field(default=None, validation_alias=_env("ARCA_MODEL"))
    fast_model: str | None = Field(default=None, validation_alias=_env("ARCA_FAST_MODEL"))
    model_tool_call: bool = Field(default=True, validation_alias=_env("ARCA_MODEL_TOOL_CALL"))
    model_json_mode: bool = Field(default=True, validation_alias=_env("ARCA_MODEL_JSON_MODE"))
    model_streaming: bool = Field(default=True, validation_alias=_env("ARCA_MODEL_STREAMING"))
    model_context_window: int = Field(
        default=32_000, ge=1_000, validation_alias=_env("ARCA_MODEL_CONTEXT_WINDOW")
    )
    models: dict[str, ModelConfig] = Field(default_factory=dict)
    """Extra named models from arca.toml (`[models.NAME]` tables)."""

    data_dir: Path = Field(default=Path("var"), validation_alias=_env("ARCA_DATA_DIR"))
    db_url: str | None = Field(default=None, validation_alias=_env("ARCA_DB_URL"))
    chroma_url: str | None = Field(default=None, validation_alias=_env("ARCA_CHROMA_URL"))
    policies_dir: Path = Field(default=Path("policies"), validation_alias=_env("ARCA_POLICIES_DIR"))
    embedding_model: str | None = Field(default=None, validation_alias=_env("ARCA_EMBEDDING_MODEL"))

    staff_role: str = Field(
        default="Support Staff", min_length=1, max_length=100, validation_alias=_env("ARCA_STAFF_ROLE")
    )
    staff_channel: int | None = Field(default=None, validation_alias=_env("ARCA_STAFF_CHANNEL"))
    support_channels: Annotated[list[int], NoDecode] = Field(
        default_factory=list, validation_alias=_env("ARCA_SUPPORT_CHANNELS")
    )
    allow_dms: bool = Field(default=False, validation_alias=_env("ARCA_ALLOW_DMS"))
    guild_ids: Annotated[list[int], NoDecode] = Field(
        default_factory=list, validation_alias=_env("ARCA_GUILD_IDS")
    )
    timezone: str = Field(default="Asia/Seoul", validation_alias=_env("ARCA_TIMEZONE"))
    max_iterations: int = Field(default=50, ge=1, le=500, validation_alias=_env("ARCA_MAX_ITERATIONS"))
    run_budget_s: float = Field(default=90.0, gt=0, le=3600, validation_alias=_env("ARCA_RUN_BUDGET_S"))
    """Seconds one run's tool loop may take before the player gets the fallback answer."""
    fact_check: Literal["enforce", "observe"] = Field(
        default="enforce", validation_alias=_env("ARCA_FACT_CHECK")
    )
    """`enforce`: an answer sentence with an unbacked fact is replaced; `observe`: only logged and counted
    (to measure the bot without the fact check)."""
    llm_concurrency: int = Field(default=8, ge=1, le=1000, validation_alias=_env("ARCA_LLM_CONCURRENCY"))
    llm_timeout: float = Field(
        default=60.0, gt=0, le=3600, allow_inf_nan=False, validation_alias=_env("ARCA_LLM_TIMEOUT")
    )
    llm_max_retries: int = Field(default=2, ge=0, le=10, validation_alias=_env("ARCA_LLM_MAX_RETRIES"))
    edit_interval: float = Field(
        default=1.0, ge=0.0, le=60.0, allow_inf_nan=False, validation_alias=_env("ARCA_EDIT_INTERVAL")
    )
    max_message_chars: int = Field(
        default=4_000, ge=100, le=MAX_MESSAGE_CHARS_LIMIT, validation_alias=_env("ARCA_MAX_MESSAGE_CHARS")
    )
    log_level: str = Field(default="INFO", validation_alias=_env("ARCA_LOG_LEVEL"))
    # ---- support analytics (see bot/analytics/stats.py) -----------------------
    conversation_idle_minutes: int = Field(
        default=30, ge=1, le=10_080, validation_alias=_env("ARCA_CONVERSATION_IDLE_MINUTES")
    )
    """A player's conversation in a thread ends after this many minutes without a message (DESIGN §7)."""
    resolution_window_minutes: int = Field(
        default=60, ge=1, le=10_080, validation_alias=_env("ARCA_RESOLUTION_WINDOW_MINUTES")
    )
    """A conversation is resolved by the bot when no escalation or staff action follows its last
    answer within this many minutes."""

    # ---- scale-out and operations (see bot/sharding.py, bot/observability.py) --
    shard_count: int | None = Field(default=None, ge=1, le=10_000, validation_alias=_env("ARCA_SHARD_COUNT"))
    """Total Discord shards across every bot process; None lets discord.py pick (one process)."""
    shard_ids: Annotated[list[int], NoDecode] = Field(
        default_factory=list, validation_alias=_env("ARCA_SHARD_IDS")
    )
    """The shards this process runs, e.g. `0,1`; empty means all of `shard_count`."""
    metrics_port: int | None = Field(
        default=None, ge=1, le=65_535, validation_alias=_env("ARCA_METRICS_PORT")
    )
    """Serve Prometheus `/metrics` on this port (127.0.0.1 unless ARCA_METRICS_HOST); None: no endpoint."""
    metrics_host: str = Field(default="127.0.0.1", validation_alias=_env("ARCA_METRICS_HOST"))
    log_format: Literal["text", "json"] = Field(default="text", validation_alias=_env("ARCA_LOG_FORMAT"))
    """`json`: one JSON object per log line with thread_id / run_id / tool / code (bot/observability.py)."""

    # ---- the web channel (see bot/channels/web) ----------------------------------------
    web_host: str = Field(default="127.0.0.1", validation_alias=_env("ARCA_WEB_HOST"))
    """Address the web channel binds; loopback unless the operator opens it."""
    web_port: int | None = Field(default=None, ge=0, le=65_535, validation_alias=_env("ARCA_WEB_PORT"))
    """`arca-bot run` serves the web channel beside Discord only when set; `arca-bot web` defaults to 8080."""
    web_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, validation_alias=_env("ARCA_WEB_ORIGINS")
    )
    """Origins allowed to call the API from another site (CORS), e.g. `https://arca.example.com`."""
    web_secret: SecretStr | None = Field(default=None, validation_alias=_env("ARCA_WEB_SECRET"))
    """HS256 key the game's server signs player tokens with (and the anonymous-visitor cookie)."""
    web_public_url: str | None = Field(default=None, validation_alias=_env("ARCA_WEB_PUBLIC_URL"))
    """Base of links the bot prints, e.g. `https://support.arca.example.com`."""
    web_rate_limit: int = Field(default=20, ge=1, validation_alias=_env("ARCA_WEB_RATE_LIMIT"))
    """Messages one identity may send per `web_rate_window`."""
    web_rate_limit_ip: int = Field(default=60, ge=1, validation_alias=_env("ARCA_WEB_RATE_LIMIT_IP"))
    """Messages one IP address may send per `web_rate_window` (all identities behind it together)."""
    web_rate_window: float = Field(
        default=60.0, gt=0, le=86_400, allow_inf_nan=False, validation_alias=_env("ARCA_WEB_RATE_WINDOW")
    )
    """Seconds of the rate-limit window."""
    web_trusted_proxies: Annotated[list[str], NoDecode] = Field(
        default_factory=list, validation_alias=_env("ARCA_WEB_TRUSTED_PROXIES")
    )
    """Proxies whose `X-Forwarded-For` names the client (addresses or networks, e.g. `10.0.0.5`); none
    by default: a client's own forwarded header is never believed."""

    @field_validator("web_trusted_proxies", mode="before")
    @classmethod
    def _split_proxies(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [p.strip() for p in value.replace(";", ",").split(",") if p.strip()]
        return value

    web_debug: bool = Field(default=False, validation_alias=_env("ARCA_WEB_DEBUG"))
    """Let the widget show each step's tool name, arguments, result and the run's figures when its
    address carries `#debug=1` (for operators; players see plain status lines)."""

    @field_validator("web_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [p.strip().rstrip("/") for p in value.replace(";", ",").split(",") if p.strip()]
        return value

    @field_validator("web_port", mode="before")
    @classmethod
    def _blank_port_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("web_public_url", mode="before")
    @classmethod
    def _blank_url_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("shard_ids", mode="before")
    @classmethod
    def _split_shard_ids(cls, value: Any) -> Any:
        if isinstance(value, int):
            return [value]
        if isinstance(value, str):
            return [p.strip() for p in value.replace(";", ",").split(",") if p.strip()]
        return value

    @field_validator("shard_count", "metrics_port", mode="before")
    @classmethod
    def _blank_int_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("log_format", mode="before")
    @classmethod
    def _lower_format(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

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

    @field_validator("support_channels", "guild_ids", mode="before")
    @classmethod
    def _split_ids(cls, value: Any) -> Any:
        if isinstance(value, int):
            return [value]
        if isinstance(value, str):
            parts = [p.strip() for p in value.replace(";", ",").split(",")]
            return [p for p in parts if p]
        return value

    @field_validator("staff_role", mode="before")
    @classmethod
    def _strip_role(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("staff_channel", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("timezone")
    @classmethod
    def _valid_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError("expected an IANA time zone such as Asia/Seoul") from exc
        return value

    @field_validator("log_level")
    @classmethod
    def _valid_level(cls, value: str) -> str:
        level = value.upper()
        if level not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError("expected one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
        return level

    @field_validator("db_url", "chroma_url", "openai_base_url", "model", "embedding_model", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

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
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if toml_path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_path))
        return tuple(sources)

    # ---- derived values -------------------------------------------------------------------

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def database_url(self) -> str:
        """The SQLAlchemy async URL: `ARCA_DB_URL`, else a SQLite file in the data dir."""
        if self.db_url:
            return self.db_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'arca.db').resolve()}"

    @property
    def chroma_dir(self) -> Path:
        return self.data_dir / "chroma"

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
                json_mode=self.model_json_mode,
                streaming=self.model_streaming,
                context_window=self.model_context_window,
            )
        if self.fast_model:
            configs["fast"] = ModelConfig(
                model=self.fast_model,
                roles=["fast"],
                tool_call=self.model_tool_call,
                json_mode=self.model_json_mode,
                streaming=self.model_streaming,
                context_window=self.model_context_window,
            )
        configs.update(self.models)
        return configs


def config_file() -> Path | None:
    """The `arca.toml` to read: `ARCA_CONFIG` (empty: none) or `./arca.toml` when it exists.

    A file the operator named explicitly must exist: a typo in `ARCA_CONFIG` is an error, not a
    silent fall-back to the defaults.
    """
    named = os.environ.get(CONFIG_FILE_ENV)
    if named is None:
        default = Path(DEFAULT_CONFIG_FILE)
        if default.is_dir():
            raise ConfigError(f"{default.resolve()}: is a folder, not a file (set ARCA_CONFIG to a file)")
        return default if default.exists() else None
    if not named.strip():
        return None
    path = Path(named)
    if path.is_dir():
        raise ConfigError(f"{CONFIG_FILE_ENV}: {path}: is a folder, not a file")
    if not path.exists():
        raise ConfigError(f"{CONFIG_FILE_ENV}: {path}: no such file")
    return path


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
