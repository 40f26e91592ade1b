"""`ReActAgent`: the two-phase run of seed 000 — a tool loop on non-streaming `chat()` (native function
calling or JSON mode, see `bot.engine.run`), then a separate streaming `stream_answer()` over the whole
trace (`bot.engine.synthesis`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from bot.engine.events import Emitter, EventCallback
from bot.engine.interrupts import InterruptQueue
from bot.engine.results import AgentResult
from bot.engine.run import AgentRun
from bot.engine.synthesis import stream_answer
from bot.engine.trace import format_trace
from bot.guard_rules import Quirks
from bot.llm.base import LLM
from bot.memory import ThreadMemory
from tools.base import ToolContext, ToolRegistry


class ReActAgent:
    """One model, one tool registry. `run()` is the loop; `stream_answer()` the synthesis."""

    def __init__(
        self,
        llm: LLM,
        tools: ToolRegistry,
        *,
        use_native_tools: bool = True,
        max_iterations: int = 50,
        run_budget_s: float | None = 90.0,
        tool_selection_threshold: int = 12,
        tool_selection_max: int = 6,
        context_window: int | None = None,
        synthesis_result_chars: int = 2_000,
        system_prompt: str | None = None,
        clock: Callable[[], float] | None = None,
        pace: Callable[[], Awaitable[None]] | None = None,
        quirks: Quirks | None = None,
    ) -> None:
        self._llm = llm
        self.quirks = quirks or Quirks()
        """The model's quirk modes for the call checks (`bot.engine.call_checks`)."""
        self.tools = tools
        self.use_native_tools = use_native_tools
        self.max_iterations = max_iterations
        self.run_budget_s = run_budget_s
        """Seconds the tool loop may take (None: no limit); then the run stops with `budget`."""
        self.tool_selection_threshold = tool_selection_threshold
        self.tool_selection_max = tool_selection_max
        self.context_window = int(context_window or llm.abilities.get("context_window") or 32_000)
        self.synthesis_result_chars = synthesis_result_chars
        self.system_prompt = system_prompt
        self.clock = clock or time.perf_counter
        self.pace = pace
        """Awaited when a model reply arrives, before the engine acts on it: a host running many runs
        spreads replies that land together over loop turns (`bot.conversations.pacing`)."""

    @property
    def llm(self) -> LLM:
        """The one model every call of every run of this agent uses."""
        return self._llm

    @property
    def native_mode(self) -> bool:
        """Native function calling iff asked for and the model declares `tool_call`; else JSON mode."""
        return bool(self.use_native_tools and self._llm.abilities.get("tool_call"))

    async def run(
        self,
        query: str,
        ctx: ToolContext,
        *,
        history: list[dict[str, Any]] | None = None,
        memory: ThreadMemory | None = None,
        interrupts: InterruptQueue | None = None,
        on_event: EventCallback | None = None,
    ) -> AgentResult:
        """Run the tool loop for `query` on `ctx.thread_id`. With `memory`, loads and persists the thread
        (every loop message as it is appended; the final answer is left to the caller)."""
        return await AgentRun(self, query, ctx, history, memory, interrupts, on_event).execute()

    def stream_answer(
        self, result: AgentResult, *, query: str | None = None, on_event: EventCallback | None = None
    ) -> AsyncIterator[str]:
        """Stream the player-facing answer; falls back to `result.answer` if synthesis yields nothing."""
        return stream_answer(
            self._llm,
            result,
            question=query if query is not None else result.query,
            result_chars=self.synthesis_result_chars,
            emit=Emitter(on_event),
            time_limit=self.run_budget_s,
        )

    def format_trace(self, messages: list[dict[str, Any]]) -> str:
        """The run as text for synthesis; every tool result cut to `synthesis_result_chars`."""
        return format_trace(messages, self.synthesis_result_chars)
