from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest

from bot.app import App, build_app
from bot.config import load_settings
from bot.llm.scripted import ScriptedLLM
from bot.store import Store

FIXED_NOW = datetime.fromisoformat("2026-03-02T10:00:00+09:00")


@dataclass
class Harness:
    app: App
    llms: list[ScriptedLLM]
    mode: str
    used: list[ScriptedLLM] = field(default_factory=list)
    """The scripts the bot's runs took, in order."""
    hooks: list[Callable[[Any], Any]] = field(default_factory=list)
    """The event hooks in force (see `hooked`); the app's own `event_hook` calls them."""

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


@pytest.fixture(params=["native", "json"])
async def harness(
    request: pytest.FixtureRequest, seeded_store: Store, policy_index: Any, tmp_path
) -> Harness:
    settings = load_settings(ARCA_DATA_DIR=str(tmp_path), edit_interval=0.0)
    queue: list[ScriptedLLM] = []
    used: list[ScriptedLLM] = []
    hooks: list[Callable[[Any], Any]] = []

    def next_llm() -> ScriptedLLM:
        if not queue:
            raise AssertionError("the bot called the model but no script was queued")
        llm = queue.pop(0)
        used.append(llm)
        return llm

    async def on_event(event: Any) -> None:
        for hook in list(hooks):
            await hook(event)

    app = await build_app(
        settings,
        llm_factory=next_llm,
        store=seeded_store,
        policy_index=policy_index,
        clock=lambda: FIXED_NOW,
        event_hook=on_event,
    )
    return Harness(app=app, llms=queue, mode=request.param, used=used, hooks=hooks)


ActorFactory = Callable[..., Any]
