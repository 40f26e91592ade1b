"""ModelRegistry: models from settings with declared abilities, roles, hints."""

from __future__ import annotations

import pytest

from bot.config import ModelConfig, load_settings
from bot.llm import ModelRegistry, OpenAILLM, ScriptedLLM


def test_models_from_settings_carry_declared_abilities_not_guessed_ones():
    settings = load_settings(
        model="gpt-4o", openai_api_key="sk-x", model_tool_call=False, model_context_window=8_000
    )
    registry = ModelRegistry.from_settings(settings)
    main = registry.for_role("main")
    assert isinstance(main, OpenAILLM)
    # "gpt-4o" can call tools, but the operator said it cannot here: the declaration wins.
    assert main.abilities["tool_call"] is False
    assert main.abilities["context_window"] == 8_000


def test_fast_role_falls_back_to_main_and_named_models_take_their_roles():
    settings = load_settings(
        model="big",
        openai_base_url="http://127.0.0.1:1/v1",
        models={"small": ModelConfig(model="tiny", roles=["fast"], tool_call=False)},
    )
    registry = ModelRegistry.from_settings(settings)
    assert registry.for_role("fast") is registry.get("small")
    assert registry.get("small").abilities["tool_call"] is False
    bare = ModelRegistry()
    only = ScriptedLLM()
    bare.register("main", only, roles=["main"])
    assert bare.for_role("fast") is only


def test_hints_resolve_by_name_or_role_and_unknown_hints_fail_clearly():
    registry = ModelRegistry()
    main, fast = ScriptedLLM(), ScriptedLLM(mode="json")
    registry.register("primary", main, roles=["main"])
    registry.register("quick", fast, roles=["fast"])
    assert registry.resolve(None) is main
    assert registry.resolve("quick") is fast
    assert registry.resolve("fast") is fast
    with pytest.raises(KeyError, match="nope"):
        registry.resolve("nope")
    with pytest.raises(KeyError, match="primary"):
        registry.get("missing")
