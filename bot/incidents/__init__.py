"""Incidents (issue 25): one declaration answers a flood of players the same way and compensates each
exactly once. `scope` reads what staff type, `compensation` previews and runs the bulk grant,
`report` sums it up, `progress` tells any process how far a run is, `notice` gives conversations the open notices. Storage: `store.incidents`."""

from __future__ import annotations

import importlib
from typing import Any

# Eager: the function `progress` shares its module's name, which a later submodule import would
# otherwise put in its place on the package.
from bot.incidents.progress import RunProgress, progress

_EXPORTS = {
    "Limits": "compensation",
    "Preview": "compensation",
    "Progress": "compensation",
    "RunResult": "compensation",
    "preview": "compensation",
    "run_compensation": "compensation",
    "open_notices": "notice",
    "ScopeError": "scope",
    "parse_plan": "scope",
    "parse_scope": "scope",
    "players_from_csv": "scope",
}
"""Where each name lives. Imported on first use (PEP 562): `bot.incidents.cli` is part of every
`arca-bot` command's parser, and the compensation module brings the whole store with it."""


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'bot.incidents' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"bot.incidents.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "Limits",
    "Preview",
    "Progress",
    "RunProgress",
    "RunResult",
    "ScopeError",
    "open_notices",
    "parse_plan",
    "parse_scope",
    "players_from_csv",
    "preview",
    "progress",
    "run_compensation",
]
