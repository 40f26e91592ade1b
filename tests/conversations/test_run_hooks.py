"""One hooks protocol watches a conversation run: a `RunHooks` sees the run start, each engine event, the
guarded answer text, each model call and exactly one end (the delivered answer, or the apology when the run failed)."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

import pytest

from bot.conversations.hooks import EventHook, FanOut, LLMCall, RunHooks, RunInfo, SurfaceCall
from bot.conversations.messages import failure_text
from bot.conversations.recording import RecordingSurface
from bot.conversations.run import RunState, answer
from bot.conversations.run_deps import RunDeps
from bot.engine.interrupts import InterruptQueue
from bot.llm.scripted import ScriptedLLM
from bot.memory import ThreadMemory
from bot.store import Store
from tests.support.surface import RecordingSurface as FailingEdits
from tools.base import Actor, ToolServices
from tools.registry import build_registry

NOW = datetime.fromisoformat("2026-03-02T10:00:00+09:00")
THREAD = "console:hooks"
ACTOR = Actor(discord_id="9001", player_id="P100")


class Journal(RunHooks):
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    async def on_run_start(self, run: RunInfo) -> None:
        self.seen.append(("start", run.run_id))

    async def on_event(self, run: RunInfo, event: Any) -> None:
        self.seen.append(("event", event.type))

    async def on_answer_text(self, run: RunInfo, text: str) -> None:
        self.seen.append(("text", text))

    async def on_run_end(self, run: RunInfo, answer: str) -> None:
        self.seen.append(("end", answer))


def _deps(store: Store, llm_factory: Any, *hooks: RunHooks) -> RunDeps:
    return RunDeps(
        store=store,
        tools=build_registry(),
        services=ToolServices(),
        llm_factory=llm_factory,
        memory=ThreadMemory(store),
        clock=lambda: NOW,
        edit_interval=0.0,
        hooks=hooks,
    )


@pytest.mark.parametrize("mode", ["native", "json"])
async def test_a_hook_sees_start_events_answer_text_and_one_end_in_order(seeded_store: Store, mode: str):
    llm = ScriptedLLM(
        [
            {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
            {"final": "ORD001은 배송 지연입니다. 불편을 드려 죄송합니다. 조금만 기다려 주세요."},
        ],
        mode=mode,
    )
    journal = Journal()
    state = RunState(actor=ACTOR, queue=InterruptQueue(), run_id="run-1")
    result = await answer(
        _deps(seeded_store, lambda: llm, journal), state, THREAD, "ORD001 어디?", RecordingSurface(), False
    )
    kinds = [kind for kind, _ in journal.seen]
    assert journal.seen[0] == ("start", "run-1")
    assert kinds.count("end") == 1 and journal.seen[-1] == ("end", result.delivered_answer)
    events = [value for kind, value in journal.seen if kind == "event"]
    assert events[0] == "thinking" and "iteration" in events and "done" in events
    text = "".join(value for kind, value in journal.seen if kind == "text")
    # What the guard released while streaming; the rest it releases at the end, in the answer of `end`.
    assert text and (result.delivered_answer or "").startswith(text)
    assert kinds.index("text") > kinds.index("event")  # the answer streams after the tool loop


async def test_a_run_that_raises_ends_once_for_its_hooks_with_the_apology(seeded_store: Store):
    def unreachable() -> Any:
        raise RuntimeError("model endpoint unavailable")

    journal = Journal()
    state = RunState(actor=ACTOR, queue=InterruptQueue(), run_id="run-2")
    with pytest.raises(RuntimeError):
        await answer(
            _deps(seeded_store, unreachable, journal),
            state,
            THREAD,
            "ORD001 어디?",
            RecordingSurface(),
            False,
        )
    assert [k for k, _ in journal.seen if k == "end"] == ["end"]
    assert journal.seen[-1] == ("end", failure_text("ko"))


async def test_fan_out_calls_only_the_moments_a_hook_overrides_in_order():
    calls: list[str] = []
    info = RunInfo("r", THREAD, ACTOR, "ko")
    fan = FanOut(
        [EventHook(lambda e: calls.append(f"a:{e}")), RunHooks(), EventHook(lambda e: calls.append(f"b:{e}"))]
    )
    await fan.on_event(info, "x")
    await fan.on_run_end(info, "done")  # nobody watches the end: nothing is called
    assert calls == ["a:x", "b:x"]
    assert dataclasses.is_dataclass(info)


class CallLog(RunHooks):
    def __init__(self) -> None:
        self.calls: list[LLMCall] = []

    def on_llm_call(self, run: RunInfo, call: LLMCall) -> None:
        self.calls.append(call)


async def test_a_hook_is_told_each_model_call_of_the_run(seeded_store: Store):
    llm = ScriptedLLM(
        [{"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "ORD001은 배송 지연입니다."}],
        mode="native",
    )
    log = CallLog()
    state = RunState(actor=ACTOR, queue=InterruptQueue(), run_id="run-3")
    result = await answer(
        _deps(seeded_store, lambda: llm, log), state, THREAD, "ORD001 어디?", RecordingSurface(), False
    )
    assert result.tools_called == ["lookup_order"]
    assert [c.purpose for c in log.calls] == ["loop", "loop", "synthesis"]
    assert all(c.seconds >= 0 and c.error_kind is None for c in log.calls)


def test_the_model_is_wrapped_only_when_a_hook_watches_model_calls():
    info = RunInfo("r", THREAD, ACTOR, "ko")
    model = ScriptedLLM([], mode="native")
    assert FanOut([Journal()]).model_for(info, model) is model
    assert FanOut([CallLog()]).model_for(info, model) is not model


class ChannelLog(RunHooks):
    def __init__(self) -> None:
        self.calls: list[tuple[str, SurfaceCall]] = []

    def on_surface_call(self, run: RunInfo, call: SurfaceCall) -> None:
        self.calls.append((run.run_id, call))


async def test_a_hook_is_told_each_send_and_edit_of_the_runs_reply_and_each_failure(seeded_store: Store):
    llm = ScriptedLLM(
        [{"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "ORD001은 배송 지연입니다."}],
        mode="native",
    )
    log = ChannelLog()
    state = RunState(actor=ACTOR, queue=InterruptQueue(), run_id="run-4")
    surface = FailingEdits(fail_all_edits=True)
    await answer(_deps(seeded_store, lambda: llm, log), state, THREAD, "ORD001 어디?", surface, False)
    ops = [(call.op, call.ok) for _, call in log.calls]
    assert {run for run, _ in log.calls} == {"run-4"}
    assert ("send", True) in ops and ("edit", False) in ops  # every edit fails on this surface
    assert FanOut([Journal()]).surface_calls(RunInfo("r", THREAD, ACTOR, "ko")) is None


async def test_a_thread_watcher_sees_only_its_threads_runs_that_start_while_it_watches(seeded_store: Store):
    def greeting() -> ScriptedLLM:
        return ScriptedLLM([{"final": "안녕하세요! 무엇을 도와드릴까요?"}])

    process, watcher = Journal(), Journal()
    deps = _deps(seeded_store, greeting, process)

    async def run(thread: str, run_id: str) -> None:
        state = RunState(actor=ACTOR, queue=InterruptQueue(), run_id=run_id)
        await answer(deps, state, thread, "안녕하세요", RecordingSurface(), False)

    with deps.watchers.watch(THREAD, watcher):
        await run(THREAD, "watched")
        await run("console:someone-else", "other-thread")
    await run(THREAD, "after")

    def starts(journal: Journal) -> list[Any]:
        return [value for kind, value in journal.seen if kind == "start"]

    assert starts(watcher) == ["watched"]
    assert [kind for kind, _ in watcher.seen].count("end") == 1
    assert ("event", "thinking") in watcher.seen
    assert starts(process) == ["watched", "other-thread", "after"]
    assert deps.watchers.of(THREAD) == ()
