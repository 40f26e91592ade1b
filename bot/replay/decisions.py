"""Every guard decision of a replayed turn, for the `--report` JSON: the fact check's and the claim check's
(read back from the case's audit log, where the guards write them) and the engine's call checks (the
refusals among the run's tool results). One shape for all: guard, rule, sentence, fact, kind, verdict,
reason, replacement — so a failing case says why."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from bot.guards.fact_check import FACT_UNBACKED, FACT_WITHHELD
from bot.store import Store, audit_views

CLAIM_REPLACED = "guard.claim_replaced"
"""The claim check's audit action (`bot.guards.claim_check`)."""
CALL_RULES = {
    "example_value": "call.example_value",
    "withdrawn": "call.withdrawal",
    "not_asked": "call.unasked",
    "new_message": "call.unread_message",
    "schema_as_args": "call.repairs",
}
"""A refused call's `reason` (its result data) and the call check that refused it."""


async def guard_decisions(store: Store, *, after_id: int) -> list[dict[str, Any]]:
    """The output guards' decisions since audit row `after_id`, oldest first."""
    rows = await audit_views.actions_after(store, after_id, (FACT_WITHHELD, FACT_UNBACKED, CLAIM_REPLACED))
    out = []
    for action, raw in rows:
        d = json.loads(raw) if raw else {}
        if action == CLAIM_REPLACED:
            out.append(
                _decision("claim_check", d.get("rule"), d.get("removed"), None, "claim", "replaced", d)
            )
        else:
            verdict = "withheld" if action == FACT_WITHHELD else "observed"
            out.append(
                _decision(
                    "fact_check", d.get("rule"), d.get("removed"), d.get("fact"), d.get("kind"), verdict, d
                )
            )
    return out


def call_decisions(runs: Iterable[Any]) -> list[dict[str, Any]]:
    """The engine's refused calls in the turn's runs (an example value, a withdrawn request, …)."""
    out = []
    for run in runs:
        for outcome in getattr(run, "tool_outcomes", None) or []:
            data = getattr(outcome.result, "data", None) or {}
            reason = data.get("reason") if isinstance(data, dict) else None
            if reason in CALL_RULES:
                out.append(
                    {
                        "guard": "call_check",
                        "rule": CALL_RULES[reason],
                        "sentence": None,
                        "fact": f"{outcome.name} {json.dumps(outcome.args, ensure_ascii=False, default=str)}",
                        "kind": "call",
                        "verdict": "refused",
                        "reason": outcome.result.message,
                        "replacement": None,
                    }
                )
    return out


def _decision(
    guard: str, rule: Any, sentence: Any, fact: Any, kind: Any, verdict: str, d: dict[str, Any]
) -> dict[str, Any]:
    return {
        "guard": guard,
        "rule": rule,
        "sentence": sentence,
        "fact": fact,
        "kind": kind,
        "verdict": verdict,
        "reason": d.get("why"),
        "replacement": d.get("replacement"),
    }
