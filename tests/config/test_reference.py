"""The configuration reference is rendered from the settings model: the checked-in page is what the model
renders, every setting is on it, and a setting without documentation fails the render."""

from __future__ import annotations

import pytest
from pydantic import Field
from pydantic_settings import BaseSettings

from bot.config import reference
from bot.config.settings import Settings
from bot.config.values import env


def test_the_checked_in_configuration_page_is_what_the_settings_model_renders() -> None:
    assert reference.PAGE.read_text(encoding="utf-8") == reference.render(), (
        "docs/configuration.md is stale: run `python -m bot.config.reference --write` and commit the page"
    )


def test_every_environment_variable_of_the_settings_is_on_the_page() -> None:
    page = reference.render()
    names = [
        info.validation_alias.choices[0]
        for info in Settings.model_fields.values()
        if info.validation_alias is not None
    ]
    assert "ARCA_GAME_WEBHOOK_SECRET" in names and "DISCORD_TOKEN" in names
    assert [n for n in names if f"| `{n}` |" not in page] == []


class _UndocumentedPart(BaseSettings):
    shiny_new_knob: int = Field(default=3, validation_alias=env("ARCA_SHINY_NEW_KNOB"))


class _WithExtra(Settings, _UndocumentedPart):
    pass


def test_a_setting_without_a_docstring_fails_the_render(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "Settings", _WithExtra)
    with pytest.raises(reference.UndocumentedSetting, match="shiny_new_knob"):
        reference.render()


def test_a_secret_default_or_value_never_reaches_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", "tok-should-never-print")
    assert "tok-should-never-print" not in reference.render()
    assert "| `DISCORD_TOKEN` | — | secret |" in reference.render()
