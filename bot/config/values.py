"""How a raw value from the environment or `arca.toml` becomes a setting: the names a setting is read
under, blanks, lists and case-free choices. Every part of `Settings` parses with these, so `ARCA_X=""`
or `ARCA_IDS="1; 2"` means the same thing for every setting."""

from __future__ import annotations

from pydantic import AliasChoices


def env(*names: str) -> AliasChoices:
    """Accept the env var name (any case) and the lowercase field name in arca.toml."""
    return AliasChoices(*names, *(n.lower() for n in names))


def blank_is_none(value: object) -> object:
    """An empty or all-space value means "not set"."""
    return None if isinstance(value, str) and not value.strip() else value


def list_items(text: str) -> list[str]:
    """`a, b; c` → `["a", "b", "c"]`: commas or semicolons, blanks dropped."""
    return [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]


def split_list(value: object) -> object:
    """A list setting's raw value: text is split by `list_items`, a single number becomes a one-item
    list, anything else (a TOML array) is left to the field's type."""
    if isinstance(value, int):
        return [value]
    if isinstance(value, str):
        return list_items(value)
    return value


def lowercase_choice(value: object) -> object:
    """A choice among fixed words is read without case or surrounding space (`HTTP ` → `http`)."""
    return value.strip().lower() if isinstance(value, str) else value
