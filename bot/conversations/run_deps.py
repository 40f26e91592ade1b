"""`RunDeps`: everything one conversation run needs, as one frozen object. `Conversations` builds it once;
a run (`bot.conversations.run.answer`) reads nothing else, so it can be built and tested without a whole
`Conversations`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.attachments import AttachmentBox
from bot.conversations.hooks import RunHooks
from bot.conversations.pacing import TurnBudget
from bot.conversations.run_events import RunEvents
from bot.conversations.watchers import ThreadWatchers
from bot.guard_rules import Quirks
from bot.llm.base import LLM
from bot.memory import ThreadMemory
from bot.persona import SUPPORT_SYSTEM_PROMPT
from bot.store import Store
from tools.base import Actor, ToolRegistry, ToolServices

LLMFactory = Callable[[], LLM]

RUN_STARTS_PER_TURN = 24
"""Runs that may start in one loop turn (one start costs ≈0.15 ms of the loop: ≈4 ms a turn)."""
ENGINE_STEPS_PER_TURN = 8
"""Model replies the engines act on in one loop turn (a step up to its next wait: ≈0.3–1 ms).

Both kept in wave 4, on their figures: 200 starts back to back held the loop 32 ms (wave 1); with 5 ms
`give_way` turns, the 200-conversation burst without these budgets had its worst lag 35–156 ms above the
idle lag against 21–110 with them, at 46–98 against 60–94 conversations/s (7 interleaved runs each on a
shared 2-core machine: not a clear difference either way, so the measured 32 ms stands)."""


@dataclass(frozen=True)
class RunDeps:
    """What a run reads: the store and the thread's memory, the tools and their services, the model and
    its limits, the clocks and paces, and who watches the run."""

    store: Store
    tools: ToolRegistry
    """Every registered tool; a run sees `tools_for(actor)`."""
    services: ToolServices
    llm_factory: LLMFactory
    """A model per run (tests queue scripted ones)."""
    memory: ThreadMemory
    clock: Callable[[], datetime]
    system_prompt: str = SUPPORT_SYSTEM_PROMPT
    use_native_tools: bool = True
    max_iterations: int = 50
    run_budget_s: float = 90.0
    edit_interval: float = 1.0
    """Seconds between edits of a streamed answer; a surface may declare its own."""
    fact_check: str = "enforce"
    """`enforce` | `observe` | `off`: what the output guard does with an unbacked fact (`ARCA_FACT_CHECK`)."""
    quirks: Quirks = field(default_factory=Quirks)
    """The model's quirk modes for the guard pipeline (`[models.*] quirks`, `ARCA_QUIRKS`)."""
    attachments: AttachmentBox | None = None
    """Where players' screenshots and text files are checked and kept (`bot.attachments`)."""
    llm_slots: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(8))
    """The LLM concurrency limit every model-driven job shares (runs, `/ops draft`)."""
    run_starts: TurnBudget = field(default_factory=lambda: TurnBudget(RUN_STARTS_PER_TURN))
    """A burst of messages starts its runs a few dozen per loop turn (see `bot.conversations.pacing`)."""
    engine_steps: TurnBudget = field(default_factory=lambda: TurnBudget(ENGINE_STEPS_PER_TURN))
    """Model replies that land together are acted on a few per loop turn."""
    run_events: RunEvents = field(default_factory=RunEvents)
    """Every run's events by thread id, for in-process watchers (the staff console's live run)."""
    metrics: Any = None
    """`bot.observability.ArcaMetrics` when metrics are on: surfaces are timed through it."""
    hooks: tuple[RunHooks, ...] = ()
    """Who watches every run besides the live feed and the run's own surface: metrics, tests."""
    watchers: ThreadWatchers = field(default_factory=ThreadWatchers)
    """Who watches one thread for a while (replay's turn, through `Conversations.watch`)."""

    def hooks_for(self, thread_id: str) -> tuple[RunHooks, ...]:
        """The process's hooks, then the thread's watchers at this moment (a run takes them when it starts)."""
        return (*self.hooks, *self.watchers.of(thread_id))

    def tools_for(self, actor: Actor) -> ToolRegistry:
        """Player tools stay visible to an unlinked user, so a call gets DENIED with how to link
        (the allowlist is enforced in `ToolRegistry.execute`); staff-only tools only for staff."""
        return self.tools.visible_to(actor)
