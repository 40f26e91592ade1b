"""What a run produces: why the tool loop stopped (`StopReason`), each executed call (`ToolOutcome`)
and the run as a whole (`AgentResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.llm.base import Usage
from tools.base import ToolResult


class StopReason(StrEnum):
    """Why the tool loop ended; the values are the strings events, metrics and transcripts use."""

    FINAL_ANSWER = "final_answer"
    MAX_ITERATIONS = "max_iterations"
    PARSE_FAILURE = "parse_failure"
    LLM_ERROR = "llm_error"
    CANCELLED = "cancelled"
    REPETITION = "repetition"
    """The model sent the same failing call a third time."""
    BUDGET = "budget"
    """The run's time budget (`ARCA_RUN_BUDGET_S`) ran out."""
    UNGROUNDED = "ungrounded"
    """The model answered twice without a call the player's message requires (`bot.engine.grounding`)."""


NO_SYNTHESIS = frozenset(
    {
        StopReason.LLM_ERROR,
        StopReason.CANCELLED,
        StopReason.REPETITION,
        StopReason.BUDGET,
        StopReason.UNGROUNDED,
        StopReason.PARSE_FAILURE,
    }
)
"""Runs that end this way get their fallback answer directly: another model call would fail again,
misbehave again, make the player wait past the budget, or state what no tool returned."""


@dataclass
class ToolOutcome:
    """One executed tool call: what was asked, what came back, what the model read."""

    call_id: str
    name: str
    args: dict[str, Any] | str
    result: ToolResult
    observation: str
    elapsed: float
    iteration: int
    reused: bool = False
    """True when a repeated read-only call was answered from this run's earlier result."""


@dataclass
class AgentResult:
    """The tool loop's outcome; `stream_answer` turns it into the player-facing reply."""

    answer: str
    """The loop's final text (or a fallback); what the player gets if synthesis fails."""
    messages: list[dict[str, Any]]
    """The whole trace; messages may carry `pinned` / `_id` (use `api_message` before sending)."""
    iterations: int
    usage: Usage
    elapsed: float
    tool_outcomes: list[ToolOutcome] = field(default_factory=list)
    leftover_interrupts: list[str] = field(default_factory=list)
    """Messages queued after the last drain: the caller must start the next run with them."""
    stopped_reason: StopReason = StopReason.FINAL_ANSWER
    error: str | None = None
    query: str = ""
    mode: str = "native"
    injected: list[str] = field(default_factory=list)
    """Interrupt texts the loop took in."""
    synthesis_error: str | None = None
    """Set when the answer stream broke; text already streamed is then incomplete."""
    sent_back: int = 0
    """Answers the engine sent back because a required call was missing (`bot.engine.grounding`)."""
    made_for_model: int = 0
    """1 when the model answered twice without a required read and the engine made it itself."""
    selected_tools: list[str] | None = None
    """Names picked by tool selection (None when selection did not run)."""
    answer_from_trace: bool = False
    """The loop stopped, but with what the answer needs in its trace (`Stop.answer_from_trace`): the
    synthesis still runs."""
    delivered_answer: str | None = None
    """The text the player finally got (after the output guard); set by the caller that delivered it."""

    @property
    def synthesized(self) -> bool:
        """Whether the answer is written by the synthesis (else the loop's text is delivered as is)."""
        return self.stopped_reason not in NO_SYNTHESIS or self.answer_from_trace

    @property
    def codes(self) -> list[str]:
        return [str(o.result.code) for o in self.tool_outcomes]

    @property
    def tools_called(self) -> list[str]:
        return [o.name for o in self.tool_outcomes]
