"""The three steps of ops drafting — planner, worker, reflection — as plain async functions of `OpsState`.

Each step gets a fresh model for its own hint (a new `ReActAgent` for the worker) and returns only the
keys it changes. A step that cannot do its job raises; the graph runner turns that into status `failed`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from bot.engine.agent import ReActAgent
from bot.engine.parsing import parse_action
from bot.engine.results import StopReason
from bot.engine.structured import structured_llm_call
from bot.llm.base import LLM
from bot.ops.prompts import WORKER_SYSTEM, planner_messages, reflection_messages, worker_query
from bot.ops.state import OpsState, StateChanges
from tools.base import ToolContext, ToolRegistry

log = logging.getLogger(__name__)

EVIDENCE_CHARS = 800
"""Each tool result is cut to this for the reviewer: it needs the figures, not whole policy pages."""


class StepFailed(Exception):
    """A step could not produce its output (empty plan, unreadable verdict, the worker's model failed)."""


@dataclass(frozen=True)
class OpsConfig:
    """Knobs of one drafting run. Model hints name a model or a role of the `ModelRegistry`."""

    max_reflections: int = 1
    """How many times the reviewer may send a draft back; the loop always ends after that."""
    planner_model: str | None = "fast"
    worker_model: str | None = "main"
    reflection_model: str | None = "main"
    worker_max_iterations: int = 12
    """Tool-loop cap of each worker run (read-only look-ups; a dozen is plenty)."""
    max_request_chars: int = 2_000
    use_native_tools: bool = True


class StepModels:
    """A step's model from its hint: the `ModelRegistry` when one is attached, else the conversation's
    `llm_factory()` for every step. Resolved anew for each step run (seed 000: a fresh agent per step)."""

    def __init__(self, registry: Any = None, factory: Callable[[], LLM] | None = None) -> None:
        if registry is None and factory is None:
            raise ValueError("StepModels needs a ModelRegistry or an llm_factory")
        self.registry = registry
        self.factory = factory

    def resolve(self, hint: str | None) -> LLM:
        if self.registry is None:
            assert self.factory is not None
            return self.factory()
        try:
            return self.registry.resolve(hint)
        except KeyError:
            # A hint from configuration that names nothing must not take ops drafting down: use main.
            log.warning("ops model hint %r names no model; using the main model", hint)
            return self.registry.resolve(None)

    def label(self, hint: str | None) -> str:
        """How progress lines name the model of a step."""
        return (hint or "main") if self.registry is not None else "default"


@dataclass
class OpsEnv:
    """What the steps may use besides the state: models, the worker's read-only tools, a tool context."""

    models: StepModels
    tools: ToolRegistry
    """Read-only tools only (see `tools.ops_readonly.ops_worker_registry`)."""
    ctx: ToolContext
    config: OpsConfig = OpsConfig()
    on_event: Any = None
    """Engine events of the worker's runs (tool progress), e.g. the conversations' event hook."""


Step = Callable[[OpsState, OpsEnv], Awaitable[StateChanges]]


def reply_text(content: str | None) -> str:
    """A plain completion's text. Without tools some models (and the scripted one) answer in the engine's
    JSON action form; its `final_answer` is unwrapped so the plan is the text, not the envelope."""
    text = (content or "").strip()
    if text.startswith("{"):
        action = parse_action(text)
        if action is not None and action.kind == "final_answer":
            return action.answer.strip()
    return text


async def plan_step(state: OpsState, env: OpsEnv) -> StateChanges:
    """Planner: a numbered plan listing every item of the request; it does not do the work."""
    llm = env.models.resolve(env.config.planner_model)
    result = await llm.chat(planner_messages(state.request), purpose="loop")
    plan = reply_text(result.content)
    if not plan:
        raise StepFailed("the planner returned an empty plan")
    return {"plan": plan}


async def work_step(state: OpsState, env: OpsEnv) -> StateChanges:
    """Worker: the complete draft from the plan (a revision when the reviewer sent it back), using
    read-only tools through a fresh `ReActAgent`."""
    llm = env.models.resolve(env.config.worker_model)
    agent = ReActAgent(
        llm,
        env.tools,
        use_native_tools=env.config.use_native_tools,
        max_iterations=env.config.worker_max_iterations,
        system_prompt=WORKER_SYSTEM,
    )
    query = worker_query(
        state.request, state.plan, draft=state.draft, missing=state.missing, feedback=state.reflection
    )
    result = await agent.run(query, env.ctx, on_event=env.on_event)
    if result.stopped_reason in (StopReason.LLM_ERROR, StopReason.MAX_ITERATIONS, StopReason.CANCELLED):
        raise StepFailed(f"the worker stopped ({result.stopped_reason}): {result.error or result.answer}")
    draft = result.answer.strip()
    if not draft:
        raise StepFailed("the worker returned an empty draft")
    changes: StateChanges = {"draft": draft}
    found = tuple(
        f"{o.name}({json.dumps(o.args, ensure_ascii=False) if isinstance(o.args, dict) else o.args}) → "
        f"[{o.result.code}] {o.observation[:EVIDENCE_CHARS]}"
        for o in result.tool_outcomes
    )
    if found:
        changes["evidence"] = state.evidence + found
    return changes


class ReflectionVerdict(BaseModel):
    """The reviewer's structured verdict on one draft."""

    accepted: bool = Field(description="true only if every item of the request is fully covered")
    missing: list[str] = Field(default_factory=list, description="items absent or incomplete")
    feedback: str = Field(default="", description="what the writer must add or fix")


async def reflect_step(state: OpsState, env: OpsEnv) -> StateChanges:
    """Reflection: checks the draft against every item of the request. Increments `reflection_count`
    itself — the cap that ends the loop reads it, so no one else may forget to count."""
    llm = env.models.resolve(env.config.reflection_model)
    outcome = await structured_llm_call(
        llm,
        reflection_messages(state.request, state.plan, state.draft, state.evidence),
        ReflectionVerdict,
        default_value=None,
    )
    verdict = outcome.value
    if not outcome.ok or not isinstance(verdict, ReflectionVerdict):
        raise StepFailed(f"the reviewer's verdict could not be read ({outcome.llm_calls} model calls)")
    missing = tuple(m.strip() for m in verdict.missing if m and m.strip())
    return {
        "reflection": verdict.feedback.strip(),
        # "accepted" with items still missing contradicts itself; the listed gaps win.
        "accepted": bool(verdict.accepted) and not missing,
        "missing": missing,
        "reflection_count": state.reflection_count + 1,
    }
