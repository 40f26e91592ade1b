"""Settings: environment variables plus an optional `arca.toml` (DESIGN.md §10), one part per concern
(`models`, `storage`, `discord_channel`, `conversation`, `operations`, `web`, `desk`, `incidents`,
`attachments`, `game`, `simulation`), put together in `settings.Settings`; `sources` says where values
come from and `values` how a raw value is parsed (one set of rules for every part). Nothing outside this
package reads a setting from the environment.

An invalid value fails at start-up with one line naming the variable and what is expected
(`ConfigError`), never a traceback deep inside the bot.
"""

from __future__ import annotations

from bot.config.models import ModelConfig
from bot.config.settings import Settings, load_settings
from bot.config.sources import ConfigError, config_file

__all__ = ["ConfigError", "ModelConfig", "Settings", "config_file", "load_settings"]
