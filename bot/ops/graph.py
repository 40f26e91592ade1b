"""The ops drafting graph: planner → worker → reflection → (worker again | end), and its small runner.

The runner merges what each step returns into the state, records the step in `history`, streams a
progress line, and ends a failed step with the best draft so far. The loop after reflection ends by
the counter first and by quality second (seed 002 §6): a reviewer can always find something to
improve, so only the cap guarantees an end.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.llm.base import LLMError
from bot.ops.state import OpsState, StateChanges, StepRecord, merge
from bot.ops.steps import OpsConfig, OpsEnv, Step, StepFailed, plan_step, reflect_step, work_step

log = logging.getLogger(__name__)

END = "end"

Progress = Callable[[str], Awaitable[None] | None]
"""Receives one progress line at a time (console prints it, Discord edits a message)."""

STEP_LABELS = {"planner": "계획 수립", "worker": "초안 작성", "reflection": "검토"}


def after_reflection(state: OpsState, config: OpsConfig) -> str:
    """The counter is checked BEFORE the verdict: once the reviewer has sent drafts back
    `max_reflections` times, the latest review is the last one, whatever it says."""
    if state.reflection_count > config.max_reflections:
        return END
    if state.accepted:
        return END
    return "worker"


@dataclass(frozen=True)
class Node:
    """One step of the graph and where to go after it."""

    run: Step
    next: Callable[[OpsState, OpsConfig], str]


def default_nodes() -> dict[str, Node]:
    return {
        "planner": Node(plan_step, lambda _s, _c: "worker"),
        "worker": Node(work_step, lambda _s, _c: "reflection"),
        "reflection": Node(reflect_step, after_reflection),
    }


def describe_failure(exc: BaseException) -> str:
    if isinstance(exc, StepFailed):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _finished_line(name: str, before: OpsState, after: OpsState, env: OpsEnv) -> str:
    if name == "planner":
        items = sum(1 for line in after.plan.splitlines() if line.strip()[:1].isdigit())
        return f"📋 계획 수립 완료 ({items}개 항목 / {items} items):\n{after.plan}"
    if name == "worker":
        looked = len(after.evidence) - len(before.evidence)
        return f"✍ 초안 {before.revisions + 1}차 완성 ({len(after.draft):,}자, 조회 {looked}회)"
    if after.accepted:
        return f"✅ 검토 {after.reflection_count}회차: 요청 항목을 모두 충족 / accepted"
    lacking = ", ".join(after.missing) or after.reflection or "-"
    if after.reflection_count > env.config.max_reflections:
        return f"⏹ 검토 {after.reflection_count}회차: 미충족 ({lacking}) — 검토 한도 도달, 마지막 초안을 전달합니다 / capped"
    return f"↩ 검토 {after.reflection_count}회차: 미충족 ({lacking}) — 작성 단계로 되돌립니다 / sent back"


def _starting_line(name: str, state: OpsState, env: OpsEnv) -> str:
    hint = {
        "planner": env.config.planner_model,
        "worker": env.config.worker_model,
        "reflection": env.config.reflection_model,
    }.get(name)
    model = env.models.label(hint)
    if name == "worker":
        return f"⏳ 초안 {state.revisions + 1}차 작성 중… (model: {model})"
    if name == "reflection":
        return f"⏳ 검토 {state.reflection_count + 1}회차 중… (model: {model})"
    return f"⏳ {STEP_LABELS.get(name, name)} 중… (model: {model})"


class OpsGraph:
    """Runs the nodes from `start` until a node routes to `END` or a step fails."""

    def __init__(self, nodes: dict[str, Node] | None = None, *, start: str = "planner") -> None:
        self.nodes = nodes if nodes is not None else default_nodes()
        self.start = start

    async def run(self, state: OpsState, env: OpsEnv, *, progress: Progress | None = None) -> OpsState:
        async def emit(line: str) -> None:
            if progress is None:
                return
            try:
                outcome = progress(line)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception:  # a broken progress display must not lose the draft
                log.exception("ops progress sink failed")

        name = self.start
        while name != END:
            node = self.nodes[name]
            await emit(_starting_line(name, state, env))
            try:
                changes: StateChanges = await node.run(state, env)
            except (asyncio.CancelledError, AssertionError):
                raise  # cancellation, and test/replay expectations, are not model failures
            except Exception as exc:  # LLMError, StepFailed or a bug: end with the best draft so far
                reason = describe_failure(exc)
                if not isinstance(exc, StepFailed | LLMError):
                    log.exception("ops step %s raised", name)
                line = f"⚠ {STEP_LABELS.get(name, name)} 단계 실패 / {name} step failed: {reason}"
                await emit(line)
                return merge(
                    state,
                    {
                        "status": "failed",
                        "failed_step": name,
                        "error": reason,
                        "history": (*state.history, StepRecord(name, line)),
                    },
                )
            after = merge(state, changes)
            line = _finished_line(name, state, after, env)
            state = merge(after, {"history": (*after.history, StepRecord(name, line))})
            await emit(line)
            name = node.next(state, env.config)
        return merge(state, {"status": "accepted" if state.accepted else "capped"})
