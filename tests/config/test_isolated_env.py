"""The suite's isolation clears every variable the settings model reads — derived from the model, so a
setting added tomorrow is cleared too — and keeps the suite's own variables."""

from __future__ import annotations

import os

import pytest

from bot.config import load_settings
from bot.config.settings import Settings
from tests.support.settings_env import SUITE_OWN, is_setting, setting_names


def test_every_variable_of_every_setting_is_one_the_suite_clears() -> None:
    names = setting_names()
    for info in Settings.model_fields.values():
        for choice in getattr(info.validation_alias, "choices", ()):
            assert is_setting(choice) and is_setting(choice.lower()), choice
    assert {"DISCORD_TOKEN", "OPENAI_BASE_URL", "ARCA_GAME_WEBHOOK_SECRET", "ARCA_CONFIG", "MODELS"} <= names


@pytest.mark.parametrize("name", ["discord_token", "Openai_Api_Key", "ARCA_SOMETHING_NEW"])
def test_any_case_or_a_new_arca_name_is_cleared(name: str) -> None:
    assert is_setting(name)


@pytest.mark.parametrize("name", [*sorted(SUITE_OWN), "PATH", "HOME", "HF_HUB_OFFLINE", "LOG_LEVEL"])
def test_the_suites_own_and_the_systems_variables_are_kept(name: str) -> None:
    assert not is_setting(name)


def test_inside_a_test_the_settings_are_the_defaults() -> None:
    assert [n for n in os.environ if is_setting(n) and n != "ARCA_CONFIG"] == []
    assert load_settings().model_dump() == Settings.model_construct().model_dump()  # every default
