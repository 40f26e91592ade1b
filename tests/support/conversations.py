"""What tests under tests/conversations/ share (helpers and constants; the fixtures are in its conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.app import App
from bot.llm.scripted import ScriptedLLM

FIXED_NOW = datetime.fromisoformat("2026-03-02T10:00:00+09:00")


@dataclass
class Harness:
    app: App
    llms: list[ScriptedLLM]
    mode: str
    used: list[ScriptedLLM] = field(default_factory=list)
    """The scripts the bot's runs took, in order."""
    hooks: list[Callable[[Any], Any]] = field(default_factory=list)
    """The event hooks in force (see `hooked`); the app's own event hook calls them."""

    @contextmanager
    def hooked(self, hook: Callable[[Any], Any]) -> Iterator[None]:
        """Every engine event of the runs inside the block also goes to `hook`."""
        self.hooks.append(hook)
        try:
            yield
        finally:
            self.hooks.remove(hook)

    @property
    def conv(self) -> Any:
        return self.app.conversations

    def script(self, *steps: dict[str, Any]) -> ScriptedLLM:
        """Queue the script for the next run (one ScriptedLLM per run)."""
        llm = ScriptedLLM(list(steps), mode=self.mode)
        self.llms.append(llm)
        return llm


ActorFactory = Callable[..., Any]
