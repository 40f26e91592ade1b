"""The ReAct engine (seed 000): agent loop and synthesis, structured output, tool selection,
context guard, interrupts, events and prompts."""

from bot.engine.agent import ReActAgent
from bot.engine.context import ContextGuard, estimate_tokens
from bot.engine.events import (
    AnswerEvent,
    CompactEvent,
    DoneEvent,
    Event,
    InjectEvent,
    IterationEvent,
    PhaseEvent,
    ThinkingEvent,
    event_adapter,
)
from bot.engine.interrupts import INTERRUPT_PREFIX, InterruptQueue
from bot.engine.parsing import parse_action
from bot.engine.results import AgentResult, StopReason, ToolOutcome
from bot.engine.selection import ToolSelection, select_tools
from bot.engine.structured import StructuredCallResult, extract_json, structured_llm_call

__all__ = [
    "INTERRUPT_PREFIX",
    "AgentResult",
    "AnswerEvent",
    "CompactEvent",
    "ContextGuard",
    "DoneEvent",
    "Event",
    "InjectEvent",
    "InterruptQueue",
    "IterationEvent",
    "PhaseEvent",
    "ReActAgent",
    "StopReason",
    "StructuredCallResult",
    "ThinkingEvent",
    "ToolOutcome",
    "ToolSelection",
    "estimate_tokens",
    "event_adapter",
    "extract_json",
    "parse_action",
    "select_tools",
    "structured_llm_call",
]
