"""Grading a simulated run by what happened in the database (coupons, escalations, orders), the language
of the bot's answers, and optional rubric lines a model judges — extra, never the only check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.game.orders import SourceUnavailable
from bot.llm.base import Usage
from bot.simulate.players import Exchange, judge
from bot.simulate.scenario import Grade
from bot.store.end_state import EndState
from bot.vocabulary.language import reply_language


@dataclass
class Verdict:
    passed: bool
    failures: list[str] = field(default_factory=list)
    """Each failed criterion, one line naming it and what was found."""
    rubric: list[dict[str, Any]] = field(default_factory=list)
    """{"line", "verdict": true | false | null (not judged)}."""


UNREADABLE = "(unreadable: the game backend did not answer)"


async def source_statuses(source: Any, order_ids: list[str]) -> dict[str, str]:
    """The statuses of `order_ids` as the order source holds them now, read fresh: with
    `ARCA_ORDER_SOURCE=http` the embedded table is only a mirror of what the bot read, so the end state
    of the studio's orders is the backend's. An order the backend does not answer for is graded as
    changed (`UNREADABLE`), one it does not know is absent."""
    found: dict[str, str] = {}
    for order_id in order_ids:
        try:
            order = await source.order(order_id, fresh=True)
        except SourceUnavailable:
            found[order_id] = UNREADABLE
            continue
        if order is not None:
            found[order_id] = order.status
    return found


def _coupons(grade: Grade, end: EndState) -> list[str]:
    out: list[str] = []
    if grade.coupons is not None:
        got = sorted(end.active_coupons)
        missing = [
            c
            for c in grade.coupons
            if not any(o == c.order_id and (c.amount is None or a == c.amount) for o, a in got)
        ]
        extra = [(o, a) for o, a in got if not any(c.order_id == o for c in grade.coupons)]
        if missing or extra:
            want = [(c.order_id, c.amount) for c in grade.coupons]
            out.append(f"coupons: expected {want}, found {got}")
    for order in grade.no_coupon_for or []:
        if order in end.live_coupon_orders:
            out.append(f"no_coupon_for: {order} has a coupon")
    return out


async def grade(
    grade: Grade,
    end: EndState,
    fixture_statuses: dict[str, str],
    history: list[Exchange],
    *,
    judge_model: Any,
    usage: Usage,
) -> Verdict:
    failures = _coupons(grade, end)
    if grade.escalation is not None and (end.escalations > 0) != grade.escalation:
        failures.append(
            f"escalation: expected {'one' if grade.escalation else 'none'}, found {end.escalations}"
        )
    if grade.orders_untouched:
        changed = {
            o: (s, end.order_statuses.get(o))
            for o, s in fixture_statuses.items()
            if end.order_statuses.get(o) != s
        }
        if changed:
            failures.append(f"orders_untouched: {changed} (fixture → end)")
    if grade.answered_in is not None:
        wrong = [
            ex.answer[:60]
            for ex in history
            # By the letters of the reply, not any Hangul: an English answer may cite a Korean section
            # ('배송 및 배송 지연', seen live) and still be English.
            if ex.answer.strip() and reply_language(ex.answer, min_letters=0) not in (None, grade.answered_in)
        ]
        if wrong:
            failures.append(f"answered_in {grade.answered_in}: {len(wrong)} answer(s) not, e.g. {wrong[0]!r}")
    rubric: list[dict[str, Any]] = []
    for line in grade.rubric:
        verdict = (
            await judge(judge_model, line, history, usage) if judge_model is not None and history else None
        )
        rubric.append({"line": line, "verdict": verdict})
        if verdict is False:
            failures.append(f"rubric: {line}")
    return Verdict(passed=not failures, failures=failures, rubric=rubric)
