"""Where settings come from: environment variables (any case) and an optional `arca.toml`, and the one
error a bad value becomes (`ConfigError`). How a value is parsed is `bot.config.values`."""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_FILE_ENV = "ARCA_CONFIG"
DEFAULT_CONFIG_FILE = "arca.toml"


class ConfigError(Exception):
    """A configuration value is missing or invalid; the message is one line for the operator."""


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
