"""What tests under tests/reliability/ share (helpers and constants; the fixtures are in its conftest.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.app import App, build_app
from bot.config import Settings, load_settings
from bot.conversations import Incoming
from bot.engine.notes import ENGINE_NOTE
from bot.llm import FunctionLLM, ModelRequest, forward, forward_stream
from bot.llm.base import LLMResult
from bot.llm.scripted import ScriptedLLM, ScriptViolation, validate_history
from bot.memory import ThreadMemory
from bot.store import Store
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.support.surface import RecordingSurface
from tools.base import Actor

PYTHON = sys.executable


def check_history(request: ModelRequest) -> None:
    """Refuse a history the Chat Completions API would reject, as the scripted model does."""
    problems = validate_history(request.messages)
    if problems:
        raise ScriptViolation(f"{request.purpose} call with an invalid history: " + "; ".join(problems))


def loop_by(answer: Callable[[ScriptedLLM, ModelRequest], LLMResult]) -> FunctionLLM:
    """A function model whose `loop` calls `answer(script, request)` decides (after the history check);
    every other purpose, the answer stream included, is served by the scripted model `script`."""
    script = ScriptedLLM([])

    async def reply(request: ModelRequest) -> LLMResult:
        if request.purpose != "loop":
            return await forward(script, request)
        check_history(request)
        return answer(script, request)

    return FunctionLLM(reply, stream_function=lambda r: forward_stream(script, r), abilities=script.abilities)


def _echo(script: ScriptedLLM, request: ModelRequest) -> LLMResult:
    last = next((m for m in reversed(request.messages) if m.get("role") == "user"), {})
    quoted = str(last.get("content") or "")[:300]
    script.answer = f"말씀하신 내용을 확인했습니다: {quoted}"
    return LLMResult(content=script.answer, finish_reason="stop")


def echo_llm() -> FunctionLLM:
    """Answers every turn with a `final` that quotes the player's message, so hostile text also goes
    through synthesis and the output guard. One instance serves any number of runs."""
    return loop_by(_echo)


def history_for_api(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A loaded thread without the engine's and the memory's own bookkeeping keys (`pinned`,
    `engine_note`, `_id`), which never reach the API."""
    return [
        {k: v for k, v in m.items() if k not in ("pinned", ENGINE_NOTE) and not k.startswith("_")}
        for m in messages
    ]


async def start_app(
    store: Store,
    tmp_path: Path,
    llm_factory: Callable[[], Any],
    *,
    policy_index: Any = None,
    settings: Settings | None = None,
) -> App:
    settings = settings or load_settings(data_dir=tmp_path / "var")
    app = await build_app(
        settings.model_copy(update={"edit_interval": 0.0}),
        llm_factory=llm_factory,
        store=store,
        policy_index=policy_index if policy_index is not None else EmptyPolicyIndex(),
    )
    return app


async def say(
    app: App,
    text: str,
    *,
    thread: str = "console:rel",
    discord_id: str | None = "9001",
    roles: frozenset[str] = frozenset(),
    surface: RecordingSurface | None = None,
) -> tuple[Any, RecordingSurface]:
    """One channel message through `Conversations.handle`, as the console channel sends it."""
    surface = surface or RecordingSurface()
    actor: Actor = await app.conversations.resolve_actor(discord_id, roles)
    outcome = await app.conversations.handle(Incoming(thread, actor, text), surface)
    await app.conversations.wait_idle(thread)
    return outcome, surface


async def load_history(store: Store, thread: str) -> list[dict[str, Any]]:
    return history_for_api(await ThreadMemory(store).load(thread))
