"""A conversation run is built from one frozen `RunDeps`, without a `Conversations`: what it reads is
what the deps hold."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

import pytest

from bot.conversations.hooks import EventHook
from bot.conversations.recording import RecordingSurface
from bot.conversations.run import RunState, answer
from bot.conversations.run_deps import RunDeps
from bot.engine.interrupts import InterruptQueue
from bot.llm.scripted import ScriptedLLM
from bot.memory import ThreadMemory
from bot.store import Store
from tools.base import Actor, ToolServices
from tools.registry import build_registry

NOW = datetime.fromisoformat("2026-03-02T10:00:00+09:00")
THREAD = "console:deps"


def _deps(store: Store, llm: Any, **changes: Any) -> RunDeps:
    deps = RunDeps(
        store=store,
        tools=build_registry(),
        services=ToolServices(),
        llm_factory=lambda: llm,
        memory=ThreadMemory(store),
        clock=lambda: NOW,
        edit_interval=0.0,
    )
    return dataclasses.replace(deps, **changes)


@pytest.mark.parametrize("mode", ["native", "json"])
async def test_a_run_built_from_run_deps_answers_and_keeps_the_thread(seeded_store: Store, mode: str):
    llm = ScriptedLLM(
        [
            {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
            {"final": "ORD001은 배송 지연입니다."},
        ],
        mode=mode,
    )
    events: list[Any] = []
    deps = _deps(seeded_store, llm, hooks=(EventHook(events.append),))
    actor = Actor(discord_id="9001", player_id="P100")
    surface = RecordingSurface()
    state = RunState(actor=actor, queue=InterruptQueue(), run_id="run-1")

    result = await answer(deps, state, THREAD, "ORD001 어디쯤 왔나요?", surface, False)

    assert result.tools_called == ["lookup_order"]
    assert result.delivered_answer and result.delivered_answer in surface.text
    assert any(getattr(e, "type", "") == "done" for e in events)  # the deps' hook saw the run
    stored = await ThreadMemory(seeded_store).recent(THREAD, limit=10)
    assert stored[-1].role == "assistant" and stored[-1].content == result.delivered_answer


def test_run_deps_are_frozen(seeded_store: Store):
    deps = _deps(seeded_store, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        deps.max_iterations = 3  # type: ignore[misc]


async def test_conversations_attributes_read_its_deps_and_refuse_a_write(seeded_store: Store):
    from bot.conversations import Conversations

    conv = Conversations(
        store=seeded_store, tools=build_registry(), llm_factory=lambda: None, services=ToolServices()
    )
    assert conv.max_iterations == conv.deps.max_iterations and conv.store is seeded_store
    with pytest.raises(AttributeError, match="deps"):
        conv.max_iterations = 2
