"""The fact check's answer sets as data: `tests/guards/sets/precision.yaml` (correct answers that must pass
untouched, each with a false twin that must be caught) and `grounding.yaml` (invented or contradicted
facts the check already catches). One loader for the tests and `bench/fact_check.py`.

A case's `results` are tool outcomes written short: `{policy: NAME}` (a search returning the set's passage
NAME), `{lookup: {id, item, amount, status, ordered}}`, `{issued: {order, amount, code, expires}}`,
`{daily_cap: {used, cap}}`, `{not_eligible: {order, status}}`, or `{result: {tool, code, message, data}}`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from bot.guards.dates import local_today
from bot.guards.evidence import catalogue_texts, rule_passages, rules_text
from bot.guards.output import FactContext, OutputGuard, OutputVerdict
from tools.base import ResultCode, ToolResult
from tools.coupon_rules import default_coupon_rules
from tools.money import format_krw
from tools.order_views import status_label
from tools.policy_search import EXCERPTS_CLOSE, EXCERPTS_OPEN

SETS = Path(__file__).parent / "sets"
CLOCK = "2026-03-02T10:00:00+09:00"
TIMEZONE = "Asia/Seoul"


@dataclass(frozen=True)
class FactCase:
    """One answer to check and what the check must do with it."""

    id: str
    klass: str
    lang: str
    answer: str
    false: str | None = None
    """The same answer with one fact made wrong: the check must withhold it."""
    player: tuple[str, ...] = ()
    results: tuple[Any, ...] = ()
    notices: tuple[str, ...] = ()
    clock: str = CLOCK
    timezone: str = TIMEZONE
    earlier: tuple[str, ...] = ()
    expect_caught: bool = False
    """A grounding case: `answer` itself is false and must be caught."""
    passages: dict[str, Any] = field(default_factory=dict, repr=False)

    def outcomes(self) -> list[tuple[str, ToolResult]]:
        return [_outcome(r, self.lang, self.passages) for r in self.results]

    def context(self, mode: str = "enforce") -> FactContext:
        rules = default_coupon_rules()
        today = local_today(datetime.fromisoformat(self.clock), self.timezone)
        return FactContext(
            player_texts=self.player,
            earlier_observations=self.earlier,
            fixed_texts=(rules_text(rules), *catalogue_texts(), today.isoformat()),
            mode=mode,
            run_id=f"set:{self.id}",
            rules=tuple(rule_passages(rules, self.lang)),
            notices=self.notices,
            today=today,
        )

    async def check(self, text: str, mode: str = "enforce") -> OutputVerdict:
        guard = OutputGuard(locale=self.lang, facts=self.context(mode))
        return await guard.check(text, outcomes=self.outcomes())


def accepted(verdict: OutputVerdict, text: str) -> bool:
    """The answer reached the player as written: no fact withheld, no claim replaced."""
    return verdict.text == text and not verdict.facts and not verdict.replaced


def load(name: str) -> list[FactCase]:
    data = yaml.safe_load((SETS / f"{name}.yaml").read_text(encoding="utf-8"))
    passages = data.get("passages") or {}
    out = []
    for c in data["cases"]:
        out.append(
            FactCase(
                id=c["id"],
                klass=c.get("class", name),
                lang=c.get("lang", "ko"),
                answer=c["answer"].rstrip("\n"),
                false=c["wrong"].rstrip("\n") if c.get("wrong") else None,
                player=tuple(c.get("player") or ()),
                results=tuple(c.get("results") or ()),
                notices=tuple(c.get("notices") or ()),
                clock=str(c.get("clock") or CLOCK),
                timezone=c.get("timezone", TIMEZONE),
                earlier=tuple(c.get("earlier") or ()),
                expect_caught=bool(c.get("caught", False)),
                passages=passages,
            )
        )
    return out


def _outcome(spec: dict[str, Any], lang: str, passages: dict[str, Any]) -> tuple[str, ToolResult]:
    ko = lang == "ko"
    if "policy" in spec:
        names = spec["policy"] if isinstance(spec["policy"], list) else [spec["policy"]]
        hits = [{"citation": passages[n]["citation"], "text": passages[n]["text"]} for n in names]
        lines = [f"{i}. {h['citation']} {' '.join(h['text'].split())}" for i, h in enumerate(hits, 1)]
        message = "\n".join([EXCERPTS_OPEN, *lines, EXCERPTS_CLOSE])
        return "search_policy", ToolResult(True, ResultCode.OK, message, {"hits": hits})
    if "lookup" in spec:
        o = spec["lookup"]
        label = status_label(o["status"], lang)
        if ko:
            message = f"주문 {o['id']}: {o['item']}, {format_krw(o['amount'], 'ko')}, 상태 {label}, 주문일 {o['ordered']}."
        else:
            message = f"Order {o['id']}: {o['item']}, {format_krw(o['amount'], 'en')}, status {label}, ordered {o['ordered']}."
        order = {k: o[k] for k in ("id", "item", "amount", "status")}
        return "lookup_order", ToolResult(True, ResultCode.OK, message, {"order": order})
    if "issued" in spec:
        c = spec["issued"]
        amount = format_krw(c["amount"], lang)
        if ko:
            message = (
                f"주문 {c['order']}에 {amount} 쿠폰을 발급했습니다. 쿠폰 코드: {c['code']}, 유효기간: {c['expires']}까지. "
                "플레이어에게 금액, 쿠폰 코드, 유효기간을 그대로 안내하세요."
            )
        else:
            message = (
                f"Issued a {amount} coupon for order {c['order']}. Coupon code: {c['code']}, valid until "
                f"{c['expires']}. Give the player the amount, code and expiry as written."
            )
        coupon = {
            "order_id": c["order"],
            "amount": c["amount"],
            "code": c["code"],
            "expires_on": c["expires"],
        }
        return "issue_coupon", ToolResult(True, ResultCode.ISSUED, message, {"coupon": coupon})
    if "daily_cap" in spec:
        d = spec["daily_cap"]
        if ko:
            message = (
                f"이 플레이어는 오늘(Asia/Seoul 기준) 이미 쿠폰 {d['used']}장을 받아 하루 최대 {d['cap']}장 한도에 "
                "도달했습니다. 오늘은 더 발급할 수 없으니 내일 다시 요청하거나 escalate_to_staff로 운영진에게 넘기세요."
            )
        else:
            message = (
                f"This player already received {d['used']} coupon(s) today (Asia/Seoul), the daily maximum of "
                f"{d['cap']}. No more today: try again tomorrow or use escalate_to_staff."
            )
        return "issue_coupon", ToolResult(False, ResultCode.DAILY_LIMIT_REACHED, message, {})
    if "not_eligible" in spec:
        n = spec["not_eligible"]
        if ko:
            message = (
                f"주문 {n['order']}의 현재 상태는 {status_label(n['status'], 'ko')}라서 보상 쿠폰 대상이 아닙니다. "
                "쿠폰은 배송 지연 상태의 주문에만 발급할 수 있습니다."
            )
        else:
            message = (
                f"Order {n['order']} is currently {n['status']}, which is not eligible for a compensation "
                "coupon. Coupons can only be issued for orders that are delayed."
            )
        data = {"order_id": n["order"], "status": n["status"]}
        return "issue_coupon", ToolResult(False, ResultCode.NOT_ELIGIBLE_STATUS, message, data)
    r = spec["result"]
    code = ResultCode(r.get("code", "OK"))
    return r["tool"], ToolResult(code == ResultCode.OK, code, r["message"], r.get("data") or {})
