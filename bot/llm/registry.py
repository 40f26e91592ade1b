"""`ModelRegistry`: the named models of this deployment and the roles they serve (`main`, `fast`).

Abilities come from configuration (`ModelConfig.abilities()`), never from the model's name.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from bot.config import ModelConfig, Settings
from bot.llm.base import LLM
from bot.llm.hooks import LLMObserver
from bot.llm.openai_llm import OpenAILLM

log = logging.getLogger(__name__)

ROLES = ("main", "fast")

LLMFactory = Callable[[str, ModelConfig, Settings], LLM]
"""Builds the LLM for one named config; the default makes an `OpenAILLM`."""


def openai_factory(
    name: str, config: ModelConfig, settings: Settings, *, observer: LLMObserver | None = None
) -> LLM:
    """An `OpenAILLM` for one named config; `observer` is told about each of its calls (metrics)."""
    api_key = config.api_key or settings.openai_api_key
    return OpenAILLM(
        config.model,
        base_url=config.base_url or settings.openai_base_url,
        api_key=api_key.get_secret_value() if api_key else None,
        abilities=config.abilities(),
        timeout=settings.llm_timeout,
        max_retries=settings.llm_max_retries,
        observer=observer,
    )


class ModelRegistry:
    """Models by name, and which name serves each role. `fast` falls back to `main`."""

    def __init__(self) -> None:
        self._models: dict[str, LLM] = {}
        self._roles: dict[str, str] = {}

    @classmethod
    def from_settings(cls, settings: Settings, *, factory: LLMFactory | None = None) -> ModelRegistry:
        """One model per `settings.model_configs()` entry; later entries take over a role they declare."""
        registry = cls()
        make = factory or openai_factory
        for name, config in settings.model_configs().items():
            registry.register(name, make(name, config, settings), roles=config.roles)
        return registry

    def register(self, name: str, llm: LLM, roles: Iterable[str] = ()) -> None:
        """Add (or replace) a model; it takes over each role in `roles`. The first model is `main` by default."""
        self._models[name] = llm
        for role in roles:
            self._roles[role] = name
        if "main" not in self._roles:
            self._roles["main"] = name

    def __contains__(self, name: object) -> bool:
        return name in self._models

    def __len__(self) -> int:
        return len(self._models)

    @property
    def names(self) -> list[str]:
        return list(self._models)

    @property
    def roles(self) -> dict[str, str]:
        """role → model name."""
        return dict(self._roles)

    def get(self, name: str) -> LLM:
        try:
            return self._models[name]
        except KeyError:
            known = ", ".join(self._models) or "(none)"
            raise KeyError(f"no model named {name!r}; configured models: {known}") from None

    def for_role(self, role: str) -> LLM:
        """The model serving `role`; `fast` (or any unassigned role) falls back to `main`."""
        name = self._roles.get(role) or self._roles.get("main")
        if name is None:
            raise KeyError("no model is configured (set ARCA_MODEL or [models.*] in arca.toml)")
        return self._models[name]

    def resolve(self, hint: str | None = None) -> LLM:
        """A model hint names a model or a role; None means `main`."""
        if not hint:
            return self.for_role("main")
        if hint in self._models:
            return self._models[hint]
        if hint in self._roles or hint in ROLES:
            return self.for_role(hint)
        known = ", ".join([*self._models, *self._roles]) or "(none)"
        raise KeyError(f"model hint {hint!r} names no model or role; known: {known}")

    def abilities(self, name: str) -> dict[str, Any]:
        return dict(self.get(name).abilities)
