"""Look up before you state (issue 28): before the model's answer is taken, every tool whose
`required_before_answer` rule fires on what the player wrote must have run with those arguments in this
run. An answer without them is sent back once with the exact call to make; after a second one the engine
makes those reads itself and asks once more (`AgentRun.make_for_model`); where it may not (a call the actor
may not run), the run ends in an honest fallback that offers a person, never in the unchecked answer."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.engine.results import ToolOutcome
from tools.base import Actor, ToolRegistry

NOT_RUN_REASONS = frozenset({"new_message", "withdrawn", "example_value", "schema_as_args"})
"""Calls the engine answered without running the tool: they ground nothing."""
QUERY_CHARS = 120


@dataclass(frozen=True)
class RequiredCall:
    """A call the model must make before it answers: the tool and the arguments that matter."""

    tool: str
    args: dict[str, Any]

    @property
    def order_id(self) -> str | None:
        value = self.args.get("order_id")
        return str(value) if value else None


def missing_calls(
    registry: ToolRegistry, actor: Actor, texts: Iterable[str], outcomes: Sequence[ToolOutcome]
) -> list[RequiredCall]:
    """The required calls (per the tools' own rules on what the player wrote) this run has not made.
    A tool the actor may not run is never required (an unlinked user cannot look up orders)."""
    said = "\n".join(texts)
    missing: list[RequiredCall] = []
    for t in registry:
        if t.required_before_answer is None or not registry.allowed(t.name, actor):
            continue
        for args in t.required_before_answer(said):
            if not any(_meets(registry, o, t.name, args) for o in outcomes):
                missing.append(RequiredCall(t.name, dict(args)))
    return missing


_ABOUT_AN_ORDER = re.compile(
    r"\d|배송|지연|완료|취소|환불|결제|상태|준비|도착|발송|금액|가격|원\b|쿠폰|보상"
    r"|deliver|ship|delay|cancel|refund|paid|pay|status|arriv|transit|prepar|price|cost|amount|coupon|won|krw",
    re.IGNORECASE,
)
"""Words of a fact about an order (a status, an amount, a date, any number): what a lookup must back."""
_ORDER_ID_SAID = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2,5}[-_]?\d{2,}(?![A-Za-z0-9])")


def answer_needs(call: RequiredCall, answer: str) -> bool:
    """Whether the answer needs the required call: a lookup of an order the player named is not needed by
    an answer that only says the id back ("ORD777 기억해 둘게요") and states nothing about an order (issue
    50: the id is backed by the player; the lookup was a step the run never needed)."""
    if call.tool != "lookup_order" or not call.order_id:
        return True
    return bool(_ABOUT_AN_ORDER.search(_ORDER_ID_SAID.sub(" ", answer or "")))


def _meets(registry: ToolRegistry, outcome: ToolOutcome, name: str, args: dict[str, Any]) -> bool:
    if outcome.name != name:
        t = registry.get(outcome.name)
        if t is None or name not in t.counts_as:
            return False
    data = outcome.result.data if isinstance(outcome.result.data, dict) else {}
    if data.get("reason") in NOT_RUN_REASONS or not isinstance(outcome.args, dict):
        return False
    return all(_same(outcome.args.get(k), v) for k, v in args.items())


def _same(given: Any, wanted: Any) -> bool:
    return str(given or "").strip().upper() == str(wanted).strip().upper()


def call_args(call: RequiredCall, question: str) -> dict[str, Any]:
    """The arguments to show the model: the required ones, and for a search the player's own question."""
    if call.args:
        return call.args
    if call.tool == "search_policy":
        q = " ".join(question.split())
        return {"query": q if len(q) <= QUERY_CHARS else q[: QUERY_CHARS - 1] + "…"}
    return {}


def send_back_text(missing: Sequence[RequiredCall], question: str, *, json_mode: bool) -> str:
    """The instruction that sends an answer back: which tool, with which arguments, and why."""
    lines = ["Not answered yet: before you answer the player, make this call and answer from its result."]
    for call in missing:
        args = call_args(call, question)
        if json_mode:
            shown = json.dumps({"action": "tool_call", "tool": call.tool, "args": args}, ensure_ascii=False)
        else:
            shown = f"{call.tool} with arguments {json.dumps(args, ensure_ascii=False)}"
        lines.append(f"- {shown} ({_why(call)})")
    lines.append("Do not state facts about orders or policies that no tool returned.")
    return "\n".join(lines)


def made_for_model_text(*, json_mode: bool) -> str:
    """After the engine made the calls the model skipped twice (`AgentRun.make_for_model`): answer now."""
    text = (
        "You answered twice without the call above, so it was made for you. Answer the player now, from "
        "its result only; do not state facts about orders or policies that it does not say."
    )
    if json_mode:
        text += ' Reply with {"action": "final_answer", "answer": "..."}.'
    return text


def _why(call: RequiredCall) -> str:
    if call.order_id:
        return f"the player named order {call.order_id}; what you say about it must come from the lookup"
    if call.tool == "search_policy":
        return (
            "the player asked about a policy rule; limits, counts and windows must come from the policy text"
        )
    return "the player's message needs it"
