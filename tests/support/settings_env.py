"""Which environment variables are the bot's settings, derived from the settings model, so the suite's
isolation (tests/conftest.py) clears a new setting without anyone adding it to a list."""

from __future__ import annotations

from pydantic import AliasChoices

from bot.config.settings import Settings
from bot.config.sources import CONFIG_FILE_ENV

SUITE_OWN = frozenset({"ARCA_TEST_PG_URL", "ARCA_TEST_CHROMA_URL", "ARCA_DESIGN_DOC"})
"""The suite's own variables (the test services' addresses, where DESIGN.md is), not the bot's settings."""


def setting_names() -> frozenset[str]:
    """Every environment name the settings model reads, upper-cased (it reads any case): each field's
    variables (`DISCORD_TOKEN`, `ARCA_MODEL`, …), the field name of a field without any (`MODELS`), and
    `ARCA_CONFIG`."""
    names = {CONFIG_FILE_ENV}
    for field, info in Settings.model_fields.items():
        if isinstance(info.validation_alias, AliasChoices):
            names.update(c.upper() for c in info.validation_alias.choices if isinstance(c, str))
        else:
            names.add(field.upper())
    return frozenset(names)


_NAMES = setting_names()


def is_setting(name: str) -> bool:
    """A variable the bot would read, or any other `ARCA_*` but the suite's own."""
    upper = name.upper()
    return upper in _NAMES or (upper.startswith("ARCA_") and upper not in SUITE_OWN)
