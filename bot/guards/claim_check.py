"""The claim check: a sentence that says a coupon was issued must be backed by this run's results or by
the ledger; an unbacked one is replaced by a truthful sentence built from the run's result codes."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.guards import truthful as truth
from bot.guards.claims import Claim, in_place_of, parse_claim
from bot.guards.mailbox import unconfirmed_arrival
from bot.store import Store
from bot.vocabulary.sentences import split_sentences
from tools.base import Actor, ResultCode, Tool
from tools.coupons import issue_coupon

log = logging.getLogger(__name__)

COUPON_RESULT_CODES = frozenset(
    {
        ResultCode.ISSUED,
        ResultCode.ALREADY_ISSUED,
        ResultCode.NOT_ELIGIBLE_STATUS,
        ResultCode.INVALID_AMOUNT,
        ResultCode.AMOUNT_OVER_LIMIT,
        ResultCode.DAILY_LIMIT_REACHED,
        ResultCode.PENDING_APPROVAL,
    }
)


COUPON_TOOLS = frozenset(t.name for t in (issue_coupon,) if t.coupon_outcome)
"""Tools that declare `coupon_outcome`: their results say whether a coupon exists. A guard built with a
registry reads the declaration from every tool in it instead."""


def coupon_tools_of(tools: Iterable[Tool] | None) -> frozenset[str]:
    """The names of the tools that declare `coupon_outcome` (the default set when `tools` is None)."""
    return COUPON_TOOLS if tools is None else frozenset(t.name for t in tools if t.coupon_outcome)


@dataclass(frozen=True)
class Outcome:
    """One tool result of this run, as the claim check sees it."""

    code: str
    data: Mapping[str, Any]
    coupon_attempt: bool = False
    """A coupon tool produced it, or its code only a coupon tool returns."""

    @property
    def coupon(self) -> Mapping[str, Any]:
        return self.data.get("coupon") or {}

    @property
    def is_coupon_attempt(self) -> bool:
        return self.coupon_attempt or self.code in COUPON_RESULT_CODES


def as_outcome(item: Any, coupon_tools: frozenset[str] = COUPON_TOOLS) -> Outcome | None:
    """Accept a `ToolResult`, the engine's `ToolOutcome` (`.name`, `.result`), a `(tool_name, ToolResult)`
    pair or a mapping with `code`/`data`."""
    if isinstance(item, Outcome):
        return item
    name = None
    if not isinstance(item, (tuple, Mapping)) and hasattr(item, "result") and not hasattr(item, "code"):
        item = (getattr(item, "name", None), item.result)
    if isinstance(item, tuple) and len(item) == 2:
        name, item = item
    if isinstance(item, Mapping):
        code = item.get("code")
        data = item.get("data") or {}
    else:
        code = getattr(item, "code", None)
        data = getattr(item, "data", None) or {}
    if code is None:
        return None
    data = data if isinstance(data, Mapping) else {}
    attempt = name in coupon_tools or data.get("tool") in coupon_tools
    return Outcome(str(code), data, attempt)


@dataclass(frozen=True)
class Backing:
    """A coupon that can back a claim: from this run's results or from the ledger."""

    order_id: str | None
    amount: int | None
    code: str | None


def _outcome_backings(outcomes: list[Outcome], codes: Iterable[str]) -> list[Backing]:
    wanted = set(codes)
    out = []
    for o in outcomes:
        if o.code in wanted:
            coupon = o.coupon
            out.append(
                Backing(
                    order_id=str(coupon.get("order_id") or o.data.get("order_id") or "").upper() or None,
                    amount=coupon.get("amount", o.data.get("amount")),
                    code=coupon.get("code"),
                )
            )
    return out


async def _ledger_backings(store: Store | None, orders: Iterable[str], codes: Iterable[str]) -> list[Backing]:
    if store is None:
        return []
    found = await store.coupons.active(orders=orders, codes=codes)
    return [Backing(c.order_id, c.amount, c.code) for c in found]


Judgement = tuple[bool, str] | None
"""(backed?, why not) from one rule, or None when the rule has nothing to say about the claim."""


@dataclass(frozen=True)
class ClaimRule:
    """One rule of the claim check: its name (in logs and the replay report), what it protects, and the
    judgement. Rules run in order; the first that judges decides. A rule that needs more than the run's
    results and the ledger (a confirmed delivery) is one more entry in `CLAIM_RULES`."""

    name: str
    protects: str
    judge: Callable[[Claim, list[Outcome], Store | None], Awaitable[Judgement]]


async def _daily_count(claim: Claim, outcomes: list[Outcome], store: Store | None) -> Judgement:
    """ "You've already received 3 coupons today": a daily-limit refusal says exactly that. Only a claim
    naming no order and no code (those need their own coupon)."""
    if not claim.already or claim.issued or claim.orders or claim.codes:
        return None
    if any(o.code == ResultCode.DAILY_LIMIT_REACHED for o in outcomes):
        return True, ""
    return None


async def _is_backed(claim: Claim, outcomes: list[Outcome], store: Store | None) -> tuple[bool, str, str]:
    """(backed?, why not, the name of the rule that decided)."""
    for rule in CLAIM_RULES:
        judged = await rule.judge(claim, outcomes, store)
        if judged is not None:
            return judged[0], judged[1], rule.name
    return True, "", ""


async def _run_or_ledger(claim: Claim, outcomes: list[Outcome], store: Store | None) -> Judgement:
    """Order, amount and code named in the sentence must all match a backing coupon."""
    kinds = {ResultCode.ISSUED}
    if claim.already or (claim.codes and not claim.issued):
        kinds.add(ResultCode.ALREADY_ISSUED)
    from_run = _outcome_backings(outcomes, kinds)
    from_ledger = await _ledger_backings(store, claim.orders, claim.codes)
    if (claim.issued or claim.already) and not claim.orders and not from_run:
        return False, "no ISSUED result in this run"
    pool = from_run + from_ledger
    if claim.orders:
        for order in claim.orders:
            if not any(b.order_id == order for b in pool):
                return False, f"no coupon for {order} in this run or the ledger"
        pool = [b for b in pool if b.order_id in claim.orders]
    for code in claim.codes:
        if not any((b.code or "").upper() == code for b in pool + from_ledger):
            return False, f"coupon code {code} does not exist"
    amounts = {b.amount for b in pool}
    if len(from_run) > 1:  # "총 40,000원": the total of this run's coupons is backed too
        amounts.add(sum(b.amount or 0 for b in from_run))
    if claim.specific_amounts:
        missing = [a for a in claim.specific_amounts if a not in amounts]
        if missing:
            return False, f"claimed amount {missing[0]:,} does not match {sorted(a for a in amounts if a)}"
    elif claim.amounts and (claim.issued or claim.already) and not (set(claim.amounts) & amounts):
        return False, f"claimed amounts {list(claim.amounts)} do not match {sorted(a for a in amounts if a)}"
    return True, ""


CLAIM_RULES: tuple[ClaimRule, ...] = (
    ClaimRule(
        "claim.daily_count",
        "an 'already received N coupons today' sentence stands on the run's daily-limit refusal",
        _daily_count,
    ),
    ClaimRule(
        "claim.run_or_ledger",
        "an issued coupon is stated only when this run issued it or the ledger holds it (order, amount, code)",
        _run_or_ledger,
    ),
)
"""The claim check's rules, in order (`bot.guards.pipeline` lists them)."""


def _results(outcomes: Iterable[Any]) -> list[Outcome]:
    return [o for o in (as_outcome(x) for x in outcomes) if o is not None]


def truthful_sentence(
    outcomes: Iterable[Any], locale: str, coupon_tools: frozenset[str] = COUPON_TOOLS
) -> str:
    """What really happened to coupons in this run, in one sentence."""
    runs = [
        o for o in (as_outcome(x, coupon_tools) for x in outcomes) if o is not None and o.is_coupon_attempt
    ]
    issued = [o for o in runs if o.code == ResultCode.ISSUED]
    if issued:
        return truth.ACTUALLY_ISSUED(
            locale, coupons=", ".join(truth.issued_part(o.data, locale) for o in issued)
        )
    if not runs:
        if any(getattr(o, "code", None) == ResultCode.SOURCE_UNAVAILABLE for o in _results(outcomes)):
            # No coupon was even tried because the game's backend could not be read: say so.
            reason = truth.refusal_reason(ResultCode.SOURCE_UNAVAILABLE, {}, locale)
            return truth.NONE_ISSUED_BECAUSE(locale, reason=reason)
        return truth.NONE_ISSUED(locale)
    last = runs[-1]
    if last.code == ResultCode.PENDING_APPROVAL:
        return truth.NOT_YET_ISSUED(locale)
    return truth.NONE_ISSUED_BECAUSE(locale, reason=truth.refusal_reason(last.code, last.data, locale))


@dataclass(frozen=True)
class ClaimVerdict:
    """The checked text, whether a claim was replaced, and what was replaced and why."""

    text: str
    replaced: bool
    details: list[dict[str, Any]] = field(default_factory=list)


class ClaimChecker:
    """Checks sentence by sentence; the first unbacked sentence becomes the truthful one, later ones go."""

    def __init__(
        self,
        *,
        outcomes: Iterable[Any],
        store: Store | None = None,
        locale: str = "ko",
        actor: Actor | None = None,
        thread_id: str | None = None,
        coupon_tools: frozenset[str] = COUPON_TOOLS,
    ) -> None:
        self.outcomes = [o for o in (as_outcome(x, coupon_tools) for x in outcomes) if o is not None]
        self.store = store
        self.locale = locale
        self.actor = actor
        self.thread_id = thread_id
        self.details: list[dict[str, Any]] = []
        self._truth_written = False

    @property
    def replaced(self) -> bool:
        return bool(self.details)

    async def check(self, sentence: str) -> str:
        claim = parse_claim(sentence)
        arrival = await unconfirmed_arrival(sentence, self.outcomes, self.store, self.locale)
        if not claim.any and arrival is None:
            return sentence
        if arrival is not None:
            backed, why, rule = False, arrival.why, "mailbox_arrival"
        else:
            backed, why, rule = await _is_backed(claim, self.outcomes, self.store)
        if backed:
            return sentence
        body = sentence.strip()
        if self._truth_written:
            replacement = ""  # the truthful sentence already written covers this claim too
        else:
            said = (arrival and arrival.sentence) or truthful_sentence(self.outcomes, self.locale)
            replacement = in_place_of(sentence, said)
            if not sentence[len(sentence.rstrip()) :]:
                replacement = replacement.rstrip(" ")
            self._truth_written = True
        detail = {"removed": body, "why": why, "replacement": replacement.strip() or None, "rule": rule}
        self.details.append(detail)
        await self._audit(detail)
        return replacement

    async def _audit(self, detail: dict[str, Any]) -> None:
        audit = getattr(self.store, "audit", None)
        if audit is None:
            return
        try:
            await audit(
                actor=self.actor.label if self.actor else "bot",
                action="guard.claim_replaced",
                thread_id=self.thread_id,
                code="REPLACED",
                detail={**detail, "codes": [o.code for o in self.outcomes]},
            )
        except Exception:  # a failed audit write must not let the false sentence through
            log.exception("claim replacement audit failed")


async def check_claims(
    text: str,
    *,
    outcomes: Iterable[Any],
    store: Store | None = None,
    locale: str = "ko",
    actor: Actor | None = None,
    thread_id: str | None = None,
    coupon_tools: frozenset[str] = COUPON_TOOLS,
) -> ClaimVerdict:
    """Replace every coupon claim in `text` that this run's `outcomes` (or the ledger) do not back."""
    checker = ClaimChecker(
        outcomes=outcomes,
        store=store,
        locale=locale,
        actor=actor,
        thread_id=thread_id,
        coupon_tools=coupon_tools,
    )
    sentences, rest = split_sentences(text)
    out = [await checker.check(s) for s in sentences]
    if rest:
        out.append(await checker.check(rest))
    return ClaimVerdict(text="".join(out), replaced=checker.replaced, details=checker.details)
