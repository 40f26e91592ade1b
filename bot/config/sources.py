"""Where settings come from: environment variables (any case) and an optional `arca.toml`, and the one
error a bad value becomes (`ConfigError`)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import AliasChoices

CONFIG_FILE_ENV = "ARCA_CONFIG"
DEFAULT_CONFIG_FILE = "arca.toml"


class ConfigError(Exception):
    """A configuration value is missing or invalid; the message is one line for the operator."""


def env(*names: str) -> AliasChoices:
    """Accept the env var name (any case) and the lowercase field name in arca.toml."""
    return AliasChoices(*names, *(n.lower() for n in names))


def blank_is_none(value: object) -> object:
    """An empty or all-space value means "not set"."""
    return None if isinstance(value, str) and not value.strip() else value


def split_list(value: object) -> object:
    """`a, b; c` → `["a", "b", "c"]` (a single number becomes a one-item list)."""
    if isinstance(value, int):
        return [value]
    if isinstance(value, str):
        return [p.strip() for p in value.replace(";", ",").split(",") if p.strip()]
    return value


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
