"""Settings: environment variables plus an optional `arca.toml` (DESIGN.md §10), one part per concern
(`models`, `storage`, `discord_channel`, `conversation`, `operations`, `web`; the support desk's part is
`bot.desk_config`), put together in `settings.Settings`; `sources` says where values come from.

An invalid value fails at start-up with one line naming the variable and what is expected
(`ConfigError`), never a traceback deep inside the bot.
"""

from __future__ import annotations

from bot.config.settings import Settings, load_settings
from bot.config.sources import ConfigError, config_file
from bot.model_config import ModelConfig

__all__ = ["ConfigError", "ModelConfig", "Settings", "config_file", "load_settings"]
