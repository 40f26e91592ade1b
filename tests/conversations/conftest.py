from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bot.app import build_app
from bot.config import load_settings
from bot.conversations.hooks import EventHook
from bot.llm.scripted import ScriptedLLM
from bot.store import Store
from tests.support.conversations import FIXED_NOW, Harness


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
        hooks=(EventHook(on_event),),
    )
    return Harness(app=app, llms=queue, mode=request.param, used=used, hooks=hooks)
