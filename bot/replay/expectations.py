"""A replayed turn's record (tools, codes, answer, reply, what the model saw) checked against the
transcript's `expect` block; every failed expectation becomes one line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.replay.format import ModelSaw, Turn
from bot.store import Store
from bot.store.coupon_views import active_coupon_amounts


def _is_subsequence(wanted: list[str], got: list[str]) -> bool:
    it = iter(got)
    return all(any(w == g for g in it) for w in wanted)


@dataclass
class TurnRecord:
    tools: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    answer: str | None = None
    events: list[str] = field(default_factory=list)
    reply: str | None = None
    denied: bool | None = None
    model_inputs: list[tuple[int | None, str]] = field(default_factory=list)
    """(script step served, text of the messages sent) for each loop call of the turn."""


def sent_text(messages: list[dict[str, Any]]) -> str:
    """What the model was sent, minus the system prompt (the persona would match almost anything)."""
    parts: list[str] = []
    for m in messages:
        if m.get("role") == "system":
            continue
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        for tc in m.get("tool_calls") or []:
            parts.append(str((tc.get("function") or {}).get("arguments", "")))
    return "\n".join(parts)


def _check_model_saw(wanted: list[str | ModelSaw], inputs: list[tuple[int | None, str]]) -> list[str]:
    out: list[str] = []
    for item in wanted:
        if isinstance(item, str):
            if not any(item in text for _, text in inputs):
                out.append(f"expect.model_saw: {item!r} was not in any loop call's messages")
            continue
        served = [text for step, text in inputs if step == item.step]
        if not served:
            out.append(
                f"expect.model_saw: step {item.step} was never served (served: {[s for s, _ in inputs]})"
            )
        elif item.text not in served[0]:
            out.append(f"expect.model_saw: {item.text!r} not in the messages that step {item.step} was sent")
    return out


def check_expectations(turn: Turn, rec: TurnRecord, coupons: list[tuple[str, int]]) -> list[str]:
    """Every failed expectation as one line: what was expected and what happened."""
    e = turn.expect
    out: list[str] = []
    if e.tools is not None and not _is_subsequence(e.tools, rec.tools):
        out.append(f"expect.tools: expected subsequence {e.tools}, got {rec.tools}")
    for name in e.tools_not_called or []:
        if name in rec.tools:
            out.append(f"expect.tools_not_called: {name} was called (calls: {rec.tools})")
    if e.codes is not None and not _is_subsequence(e.codes, rec.codes):
        out.append(f"expect.codes: expected subsequence {e.codes}, got {rec.codes}")
    answer = rec.answer or ""
    if e.answer is not None and answer.strip() != e.answer.strip():
        out.append(f"expect.answer: expected {e.answer.strip()!r}, got {answer.strip()!r}")
    for text in e.answer_contains or []:
        if text not in answer:
            out.append(f"expect.answer_contains: {text!r} not in answer {answer!r}")
    for text in e.answer_not_contains or []:
        if text in answer:
            out.append(f"expect.answer_not_contains: {text!r} found in answer {answer!r}")
    if e.coupons is not None:
        expected = sorted((c.order_id, c.amount) for c in e.coupons)
        got_orders = sorted(coupons)
        ok = len(expected) == len(got_orders) and all(
            any(o == eo and (ea is None or a == ea) for o, a in got_orders) for eo, ea in expected
        )
        if not ok:
            out.append(f"expect.coupons: expected active {expected}, got {got_orders}")
    for kind in e.events or []:
        if kind not in rec.events:
            out.append(f"expect.events: no {kind!r} event (saw {sorted(set(rec.events))})")
    observations = "\n".join(rec.observations)
    for text in e.observations_contain or []:
        if text not in observations:
            out.append(f"expect.observations_contain: {text!r} not in tool results {rec.observations}")
    for text in e.observations_not_contain or []:
        if text in observations:
            out.append(f"expect.observations_not_contain: {text!r} found in tool results")
    reply = rec.reply or ""
    for text in e.reply_contains or []:
        if text not in reply:
            out.append(f"expect.reply_contains: {text!r} not in reply {reply!r}")
    for text in e.reply_not_contains or []:
        if text in reply:
            out.append(f"expect.reply_not_contains: {text!r} found in reply {reply!r}")
    if e.denied is not None and bool(rec.denied) != e.denied:
        out.append(f"expect.denied: expected {e.denied}, got {bool(rec.denied)}")
    if e.model_saw:
        out.extend(_check_model_saw(e.model_saw, rec.model_inputs))
    for text in e.model_not_saw or []:
        if any(text in sent for _, sent in rec.model_inputs):
            out.append(f"expect.model_not_saw: {text!r} was in the messages sent to the model")
    return out


async def active_coupons(store: Store) -> list[tuple[str, int]]:
    return await active_coupon_amounts(store)
