"""The engine's half of the guard pipeline: the typed checks a tool call passes before it runs, in order,
each a named rule (`bot.guard_rules.GuardRule`). A refusal is a `ToolResult` the model reads; the call is
not run. Quirk checks follow the model's quirk modes (`Quirks`): off, observe (logged, not refused), or
enforce. The checks that need the run's live state (a message the model has not read, a withdrawal)
run where that state is, in `bot.engine.calls`, under the rules named here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.engine.example_values import example_refusal
from bot.engine.unasked import unasked_refusal
from bot.guard_rules import GuardRule, Quirks
from tools.base import Tool, ToolRegistry, ToolResult


@dataclass(frozen=True)
class PendingCall:
    """A call about to run, after repairs: what every check may read."""

    tool: Tool
    args: dict[str, Any]
    registry: ToolRegistry
    known_texts: Sequence[str]
    """Everything the conversation got from outside the model (player messages, tool results)."""
    player_texts: Sequence[str]
    """What the player wrote in this run."""

    @property
    def compensates(self) -> bool:
        return bool(self.tool.coupon_outcome) and self.registry.is_side_effect(self.tool.name)


@dataclass(frozen=True)
class CallCheck:
    rule: GuardRule
    judge: Callable[[PendingCall], ToolResult | None]


REPAIRS = GuardRule(
    "call.repairs",
    "call",
    "a 'functions.'-prefixed name or JSON-string arguments fail a call that was meant right",
    "repairs",
)
EXAMPLE_VALUE = GuardRule(
    "call.example_value",
    "call",
    "a made-up or copied order id (ORD001) or a placeholder ('ORD…') reaches a tool",
    "example_values",
)
UNASKED = GuardRule(
    "call.unasked",
    "call",
    "a coupon issued to a player who asked about a rule, not for compensation",
    "unasked",
)
UNREAD_MESSAGE = GuardRule(
    "call.unread_message",
    "call",
    "a side effect runs before the model read what the player just wrote ('cancel, do not issue')",
)
WITHDRAWAL = GuardRule(
    "call.withdrawal",
    "call",
    "a side effect runs after the player took the request back mid-run",
    "withdrawals",
)
REPETITION = GuardRule(
    "call.repetition",
    "call",
    "the same failing call made again and again until the budget runs out",
)
TOOL_RULES = GuardRule(
    "call.tool_rules",
    "call",
    "what each tool enforces inside itself: ownership, link, order status, amounts, daily caps, one coupon "
    "per order",
)

BEFORE_RUN: tuple[CallCheck, ...] = (
    CallCheck(
        EXAMPLE_VALUE,
        lambda c: example_refusal(c.tool, c.args, c.known_texts, c.player_texts),
    ),
    CallCheck(UNASKED, lambda c: unasked_refusal(c.player_texts) if c.compensates else None),
)
"""The checks on the call itself, in order: the first refusal wins."""

CALL_RULES: tuple[GuardRule, ...] = (
    REPAIRS,
    *(c.rule for c in BEFORE_RUN),
    UNREAD_MESSAGE,
    WITHDRAWAL,
    REPETITION,
    TOOL_RULES,
)
"""Every call check in the order a call meets them (`arca-bot guards`)."""


def first_refusal(call: PendingCall, quirks: Quirks) -> ToolResult | None:
    """The refusal of the first check that refuses the call (observed quirks only log theirs)."""
    for check in BEFORE_RUN:
        refusal = check.judge(call)
        if refusal is not None and quirks.acts(
            check.rule.quirk, f"refused {call.tool.name} ({check.rule.name})"
        ):
            return refusal
    return None
