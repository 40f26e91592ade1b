"""Output guard: what the bot may say. Mass mentions are neutralised, other people's personal data is
redacted, and a claim that a coupon was issued must be backed by this run's results or by the ledger.

An unbacked claim is replaced in place by a truthful sentence built from the run's result codes (and
audited); it is never merely followed by a correction. Whole texts and streams go through the same
per-sentence pipeline, so the streamed text and the final text agree.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import or_, select

from bot.guards.input import neutralize_mentions
from bot.store import ORDER_STATUSES, Coupon, Player
from bot.vocabulary.catalogue import NOT_LINKED_REASON, PROMPT_NOT_SHARED
from tools.base import Actor, ResultCode
from tools.money import find_krw_amounts, format_krw

log = logging.getLogger(__name__)

# ---- sentences ---------------------------------------------------------------------------------

# A sentence ends after terminal punctuation (plus closing quotes/brackets) and one whitespace
# character, or at a newline. Deciding needs only the text up to that point, so a stream and the
# whole text split identically.
_BOUNDARY = re.compile(r"[.!?。！？…]+[\"'”’)\]」』]*[ \t\n]|\n")


def split_sentences(text: str) -> tuple[list[str], str]:
    """(complete sentences, each with its terminator, the unfinished rest). `"".join(...) + rest == text`."""
    parts: list[str] = []
    pos = 0
    for m in _BOUNDARY.finditer(text):
        parts.append(text[pos : m.end()])
        pos = m.end()
    return parts, text[pos:]


# ---- claims ------------------------------------------------------------------------------------

_NOT_QUESTION_KO = r"(?!\s*(?:는지|는가|나요|나\?|을까|을지|다면|으면|면|습니까\?|지\s*않|지\s*못|지는|되지|하지|되었는지|됐는지|여부))"
_CLAIM_KO = [
    re.compile(
        r"발급\s*(?:을|이)?\s*(?:했|하였|해\s*드렸|해드렸|해\s*드리었|되었|됐|돼\s*있|되어\s*있|완료|"
        r"처리\s*(?:했|되었|됐|완료)|해\s*놓|해\s*두었|해\s*뒀)" + _NOT_QUESTION_KO
    ),
]
# Verbs that only mean a coupon when the sentence is about one ("지급했습니다" could be a refund).
_CLAIM_KO_CONTEXT = [
    re.compile(r"(?:지급|적립)\s*(?:을|이)?\s*(?:했|하였|해\s*드렸|해드렸|되었|됐|완료)" + _NOT_QUESTION_KO),
    re.compile(r"쿠폰\s*(?:을|를)?\s*(?:드렸|보내\s*드렸|보냈)"),
]
_ALREADY_KO = re.compile(
    r"(?:이미\s*(?:\S+\s*){0,3}?(?:발급|지급)\s*(?:되|된|받|했|하였|해|돼)"
    r"|이미\s*(?:\S+\s+){0,3}?쿠폰(?:을|를|이|은)?\s*(?:받|있|갖|보유))" + _NOT_QUESTION_KO
)
_COUPON_CONTEXT = re.compile(r"쿠폰|보상|coupon|voucher|compensation|credit", re.IGNORECASE)

_CLAIM_EN = [
    re.compile(
        r"\b(?:i|we)(?:'ve|’ve|\s+have|\s+had)?\s+(?:just\s+|now\s+|successfully\s+|already\s+)?issued\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:has|have|had|was|were|is|are)\s+(?:now\s+|just\s+|successfully\s+|already\s+)?been\s+"
        r"(?:successfully\s+)?issued\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"(?:'s|’s)\s+(?:now\s+|just\s+|already\s+)?been\s+(?:successfully\s+)?issued\b", re.IGNORECASE
    ),
    re.compile(r"\b(?:was|were)\s+(?:successfully\s+|just\s+)?issued\b", re.IGNORECASE),
    re.compile(r"\bissued\s+successfully\b|\bsuccessfully\s+issued\b", re.IGNORECASE),
]
_CLAIM_EN_CONTEXT = [
    re.compile(
        r"\b(?:i|we)(?:'ve|’ve|\s+have)?\s+(?:just\s+|now\s+|successfully\s+|already\s+)?"
        r"(?:granted|sent|added|credited|applied|created)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:has|have|was|were)\s+(?:now\s+|just\s+)?(?:been\s+)?(?:granted|credited|added|applied|sent)\b",
        re.IGNORECASE,
    ),
]
_ALREADY_EN = re.compile(
    r"\balready\s+(?:been\s+)?(?:issued|granted)\b|\balready\s+(?:has|have|got|received)\s+(?:a|an|the|your)?\s*"
    r"(?:\S+\s+){0,2}?(?:coupon|voucher)|\b(?:issued|granted)\s+(?:\S+\s+){0,4}?already\b",
    re.IGNORECASE,
)
# A negation or condition earlier in the same clause turns an "issued" phrase into an honest refusal.
_NEGATION_EN = re.compile(
    r"\b(?:no|not|never|nothing|none|neither|nor|if|once|when|after|until|unless|whether|cannot)\b|n't|n’t",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(r"[,;:—–()]|\bbut\b|\band\b", re.IGNORECASE)

_COUPON_CODE = re.compile(r"(?<![A-Za-z0-9])ARCA-[A-Z0-9]{4}-[A-Z0-9]{4}(?![A-Za-z0-9])", re.IGNORECASE)
_ORDER_ID = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{2,5}\d{2,})(?![A-Za-z0-9])")
_SPECIFIC_AFTER = re.compile(
    r"\s*(?:짜리|상당의|상당|의)?\s*(?:보상\s*)?(?:할인\s*)?(?:쿠폰|coupon|voucher)"
    r"|\s*(?:을|를)?\s*(?:발급|지급)",  # "총 40,000원을 발급했습니다": the amount is what was issued
    re.IGNORECASE,
)
_SPECIFIC_BEFORE = re.compile(r"(?:coupon|voucher)\s+(?:of|for|worth)\s*$", re.IGNORECASE)

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


@dataclass(frozen=True)
class Claim:
    """What one sentence asserts about coupons."""

    issued: bool = False
    already: bool = False
    codes: tuple[str, ...] = ()
    orders: tuple[str, ...] = ()
    specific_amounts: tuple[int, ...] = ()
    amounts: tuple[int, ...] = ()

    @property
    def any(self) -> bool:
        return self.issued or self.already or bool(self.codes)


def _negated_en(sentence: str, start: int) -> bool:
    before = sentence[:start]
    clause_starts = [m.end() for m in _CLAUSE_BREAK.finditer(before)]
    clause = before[clause_starts[-1] :] if clause_starts else before
    return bool(_NEGATION_EN.search(clause))


def _first_positive(patterns: Iterable[re.Pattern[str]], sentence: str, *, english: bool) -> bool:
    for pattern in patterns:
        for m in pattern.finditer(sentence):
            if english and _negated_en(sentence, m.start()):
                continue
            return True
    return False


def parse_claim(sentence: str) -> Claim:
    """Find issue / already-issued claims, coupon codes, order ids and amounts in one sentence."""
    text = re.sub(r"\s+", " ", sentence)
    context = bool(_COUPON_CONTEXT.search(text))
    issued = _first_positive(_CLAIM_KO, text, english=False) or _first_positive(_CLAIM_EN, text, english=True)
    if not issued and context:
        issued = _first_positive(_CLAIM_KO_CONTEXT, text, english=False) or _first_positive(
            _CLAIM_EN_CONTEXT, text, english=True
        )
    already = bool(_ALREADY_KO.search(text)) or _first_positive([_ALREADY_EN], text, english=True)
    codes = tuple(dict.fromkeys(c.upper() for c in _COUPON_CODE.findall(text)))
    if not (issued or already or codes):
        return Claim()
    without_codes = _COUPON_CODE.sub(" ", text)
    orders = tuple(dict.fromkeys(o.upper() for o in _ORDER_ID.findall(without_codes)))
    mentions = find_krw_amounts(text)
    specific = tuple(
        a.value
        for a in mentions
        if _SPECIFIC_AFTER.match(text, a.end) or _SPECIFIC_BEFORE.search(text[: a.start])
    )
    return Claim(
        issued=issued,
        already=already,
        codes=codes,
        orders=orders,
        specific_amounts=specific,
        amounts=tuple(a.value for a in mentions),
    )


@dataclass(frozen=True)
class Outcome:
    """One tool result of this run, as the claim check sees it."""

    code: str
    data: Mapping[str, Any]

    @property
    def coupon(self) -> Mapping[str, Any]:
        return self.data.get("coupon") or {}

    @property
    def is_coupon_attempt(self) -> bool:
        return self.data.get("tool") == "issue_coupon" or self.code in COUPON_RESULT_CODES


def as_outcome(item: Any) -> Outcome | None:
    """Accept a `ToolResult`, the engine's `ToolOutcome` (`.name`, `.result`), a `(tool_name, ToolResult)`
    pair or a mapping with `code`/`data`."""
    if not isinstance(item, (tuple, Mapping)) and hasattr(item, "result") and not hasattr(item, "code"):
        item = (getattr(item, "name", None), item.result)
    if isinstance(item, tuple) and len(item) == 2:
        name, item = item
        outcome = as_outcome(item)
        if outcome is not None and name == "issue_coupon" and outcome.data.get("tool") is None:
            return Outcome(outcome.code, {**outcome.data, "tool": "issue_coupon"})
        return outcome
    if isinstance(item, Mapping):
        code = item.get("code")
        data = item.get("data") or {}
    else:
        code = getattr(item, "code", None)
        data = getattr(item, "data", None) or {}
    if code is None:
        return None
    return Outcome(str(code), data if isinstance(data, Mapping) else {})


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


async def _ledger_backings(store: Any, orders: Iterable[str], codes: Iterable[str]) -> list[Backing]:
    orders, codes = list(orders), list(codes)
    if store is None or not (orders or codes):
        return []
    conditions = []
    if orders:
        conditions.append(Coupon.order_id.in_(orders))
    if codes:
        conditions.append(Coupon.code.in_(codes))
    async with store.session() as session:
        rows = await session.execute(select(Coupon).where(Coupon.status == "active", or_(*conditions)))
        return [Backing(c.order_id, c.amount, c.code) for c in rows.scalars()]


async def _is_backed(claim: Claim, outcomes: list[Outcome], store: Any) -> tuple[bool, str]:
    """(backed?, why not). Order, amount and code named in the sentence must all match a backing coupon."""
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


def _reason(o: Outcome, locale: str) -> str:
    ko = locale == "ko"
    d = o.data
    if o.code == ResultCode.AMOUNT_OVER_LIMIT and d.get("limit"):
        limit = format_krw(int(d["limit"]), locale)
        return (
            f"1회 한도({limit})를 넘었습니다" if ko else f"the amount is over the per-coupon limit of {limit}"
        )
    if o.code == ResultCode.INVALID_AMOUNT:
        if d.get("min_amount") and d.get("amount_step"):
            lo, step = format_krw(int(d["min_amount"]), locale), format_krw(int(d["amount_step"]), locale)
            return (
                f"요청 금액이 유효하지 않습니다({lo} 이상, {step} 단위)"
                if ko
                else f"the amount was not valid (at least {lo}, in steps of {step})"
            )
        return "요청 금액이 유효하지 않습니다" if ko else "the amount was not valid"
    if o.code == ResultCode.NOT_ELIGIBLE_STATUS:
        status = str(d.get("status") or "")
        label = ORDER_STATUSES.get(status, status)
        return (
            f"주문 상태({label})가 보상 대상이 아닙니다"
            if ko
            else f"the order's status ({status}) is not eligible for compensation"
        )
    if o.code == ResultCode.ALREADY_ISSUED:
        c = o.coupon
        if c.get("amount"):
            amount = format_krw(int(c["amount"]), locale)
            return (
                f"주문 {c.get('order_id')}에는 이미 {amount} 쿠폰이 있습니다"
                if ko
                else f"order {c.get('order_id')} already has a {amount} coupon"
            )
        return "이 주문에는 이미 쿠폰이 있습니다" if ko else "the order already has a coupon"
    table = {
        ResultCode.DAILY_LIMIT_REACHED: (
            "오늘의 발급 한도에 도달했습니다",
            "the daily limit has been reached",
        ),
        ResultCode.PENDING_APPROVAL: ("운영진 승인을 기다리고 있습니다", "it is waiting for staff approval"),
        ResultCode.ORDER_NOT_FOUND: ("주문을 찾을 수 없습니다", "the order was not found"),
        ResultCode.NOT_LINKED: (NOT_LINKED_REASON.ko, NOT_LINKED_REASON.en),
        ResultCode.DENIED: ("이 기능을 쓸 권한이 없습니다", "this action is not allowed"),
    }
    ko_text, en_text = table.get(o.code, ("처리 중 오류가 발생했습니다", "an error occurred"))
    return ko_text if ko else en_text


def truthful_sentence(outcomes: Iterable[Any], locale: str) -> str:
    """What really happened to coupons in this run, in one sentence."""
    runs = [o for o in (as_outcome(x) for x in outcomes) if o is not None and o.is_coupon_attempt]
    ko = locale == "ko"
    issued = [o for o in runs if o.code == ResultCode.ISSUED]
    if issued:
        parts = []
        for o in issued:
            c = o.coupon
            amount = format_krw(int(c.get("amount") or o.data.get("amount") or 0), locale)
            order = c.get("order_id") or o.data.get("order_id")
            expires = c.get("expires_on") or str(c.get("expires_at") or "")[:10]
            if ko:
                parts.append(f"주문 {order}의 {amount} 쿠폰(코드 {c.get('code')}, 유효기간 {expires}까지)")
            else:
                parts.append(
                    f"a {amount} coupon for order {order} (code {c.get('code')}, valid until {expires})"
                )
        joined = ", ".join(parts)
        return f"실제로 발급된 쿠폰은 {joined}입니다." if ko else f"The coupon actually issued is {joined}."
    if not runs:
        return "쿠폰은 발급되지 않았습니다." if ko else "No coupon was issued."
    last = runs[-1]
    if last.code == ResultCode.PENDING_APPROVAL:
        return (
            "쿠폰은 아직 발급되지 않았습니다: 운영진 승인을 기다리고 있습니다."
            if ko
            else "The coupon has not been issued yet: it is waiting for staff approval."
        )
    return (
        f"쿠폰은 발급되지 않았습니다: {_reason(last, locale)}."
        if ko
        else f"No coupon was issued: {_reason(last, locale)}."
    )


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
        store: Any = None,
        locale: str = "ko",
        actor: Actor | None = None,
        thread_id: str | None = None,
    ) -> None:
        self.outcomes = [o for o in (as_outcome(x) for x in outcomes) if o is not None]
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
        if not claim.any:
            return sentence
        backed, why = await _is_backed(claim, self.outcomes, self.store)
        if backed:
            return sentence
        body = sentence.strip()
        lead = sentence[: len(sentence) - len(sentence.lstrip())]
        tail = sentence[len(sentence.rstrip()) :]
        if self._truth_written:
            replacement = ""
        else:
            replacement = lead + truthful_sentence(self.outcomes, self.locale) + (tail or "")
            self._truth_written = True
        detail = {"removed": body, "why": why, "replacement": replacement.strip() or None}
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
    store: Any = None,
    locale: str = "ko",
    actor: Actor | None = None,
    thread_id: str | None = None,
) -> ClaimVerdict:
    """Replace every coupon claim in `text` that this run's `outcomes` (or the ledger) do not back."""
    checker = ClaimChecker(outcomes=outcomes, store=store, locale=locale, actor=actor, thread_id=thread_id)
    sentences, rest = split_sentences(text)
    out = [await checker.check(s) for s in sentences]
    if rest:
        out.append(await checker.check(rest))
    return ClaimVerdict(text="".join(out), replaced=checker.replaced, details=checker.details)


# ---- personal data -----------------------------------------------------------------------------

_EMAIL = re.compile(r"(?<![A-Za-z0-9_.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}(?![A-Za-z0-9_-])")
_RRN = re.compile(r"(?<![\d-])(\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])\s?-?\s?([1-8])\d{6}(?![\d-])")
_CARD = re.compile(r"(?<![\d\-@&#!:])(?:\d[ -]?){12,18}\d(?![\d\->])")  # not a Discord <@id>/<#id>
_PHONE = re.compile(
    # ASCII-only lookarounds: a Korean particle right after the number ("010-1234-5678입니다") must not hide it.
    r"(?<![A-Za-z0-9_-])(?:\+82[- .]?|0)(?:1[016789]|2|[3-6][1-5]|70)[- .)]?\d{3,4}[- .]?\d{4}(?![A-Za-z0-9_-])"
    r"|(?<![A-Za-z0-9_-])\+\d{1,3}[- .]?\(?\d{1,4}\)?[- .]?\d{3,4}[- .]?\d{4}(?![A-Za-z0-9_-])"
)
_LABELS = {
    "phone": ("[전화번호 비공개]", "[phone number hidden]"),
    "email": ("[이메일 비공개]", "[email hidden]"),
    "card": ("[카드번호 비공개]", "[card number hidden]"),
    "rrn": ("[주민등록번호 비공개]", "[resident registration number hidden]"),
}


def _digits(value: str) -> str:
    d = re.sub(r"\D", "", value)
    return "0" + d[2:] if d.startswith("82") else d


def _luhn(number: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(number)):
        n = int(ch)
        if i % 2:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


def redact_pii(
    text: str, *, locale: str = "ko", own_phones: Iterable[str] = (), own_emails: Iterable[str] = ()
) -> tuple[str, list[str]]:
    """Hide phone numbers, e-mails, card numbers and resident registration numbers that are not the actor's.

    The actor's own phone and e-mail (from their Player row) may be repeated back to them; card and
    resident registration numbers never are.
    """
    phones = {_digits(p) for p in own_phones if p}
    emails = {e.strip().lower() for e in own_emails if e}
    kinds: list[str] = []

    def label(kind: str) -> str:
        kinds.append(kind)
        ko, en = _LABELS[kind]
        return ko if locale == "ko" else en

    def rrn(m: re.Match[str]) -> str:
        return label("rrn")

    def card(m: re.Match[str]) -> str:
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return label("card")
        return m.group(0)

    def email(m: re.Match[str]) -> str:
        return m.group(0) if m.group(0).lower() in emails else label("email")

    def phone(m: re.Match[str]) -> str:
        return m.group(0) if _digits(m.group(0)) in phones else label("phone")

    text = _RRN.sub(rrn, text)
    text = _CARD.sub(card, text)
    text = _EMAIL.sub(email, text)
    text = _PHONE.sub(phone, text)
    return text, kinds


# ---- the guard ---------------------------------------------------------------------------------

_SHINGLE = 6
"""Words in a row that count as quoting a protected text (the system prompt) verbatim."""


def _shingles_of(texts: Iterable[str]) -> frozenset[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    for text in texts:
        words = re.findall(r"[\w'’]+", text.lower())
        out.update(tuple(words[i : i + _SHINGLE]) for i in range(len(words) - _SHINGLE + 1))
    return frozenset(out)


@dataclass(frozen=True)
class OutputVerdict:
    """The text that may be shown, and what the guard changed in it."""

    text: str
    replaced: bool
    """A coupon claim was replaced by the truth."""
    redactions: list[str] = field(default_factory=list)
    """Kinds of personal data hidden: phone, email, card, rrn."""
    details: list[dict[str, Any]] = field(default_factory=list)
    mentions_neutralized: bool = False


class OutputGuard:
    """Checks the bot's answers for one actor and thread (claims, personal data, mass mentions)."""

    def __init__(
        self,
        *,
        store: Any = None,
        actor: Actor | None = None,
        thread_id: str | None = None,
        locale: str = "ko",
        own_phones: Iterable[str] = (),
        own_emails: Iterable[str] = (),
        protected_texts: Iterable[str] = (),
    ) -> None:
        self.store = store
        self._protected = _shingles_of(protected_texts)
        self.actor = actor
        self.thread_id = thread_id
        self.locale = locale
        self.own_phones = tuple(own_phones)
        self.own_emails = tuple(own_emails)

    @classmethod
    async def for_actor(
        cls,
        store: Any,
        actor: Actor,
        *,
        thread_id: str | None = None,
        locale: str = "ko",
        protected_texts: Iterable[str] = (),
    ) -> OutputGuard:
        """A guard that lets the actor's own phone and e-mail (from their Player row) through."""
        phones: list[str] = []
        emails: list[str] = []
        if store is not None and actor.player_id:
            async with store.session() as session:
                player = await session.get(Player, actor.player_id)
            if player is not None:
                phones = [player.phone] if player.phone else []
                emails = [player.email] if player.email else []
        return cls(
            store=store,
            actor=actor,
            thread_id=thread_id,
            locale=locale,
            own_phones=phones,
            own_emails=emails,
            protected_texts=protected_texts,
        )

    def stream(self, *, outcomes: Iterable[Any]) -> StreamingOutputGuard:
        return StreamingOutputGuard(self, outcomes=outcomes)

    async def check(self, text: str, *, outcomes: Iterable[Any]) -> OutputVerdict:
        """Check a whole answer; equal to streaming it through `stream()` and calling `finish()`."""
        stream = self.stream(outcomes=outcomes)
        await stream.feed(text)
        await stream.finish()
        return stream.verdict()

    def _clean(self, sentence: str, state: StreamingOutputGuard) -> str:
        if self._protected and _shingles_of([sentence]) & self._protected:
            # A verbatim run of the system prompt: the instructions stay private.
            state.prompt_leaks += 1
            ending = sentence[len(sentence.rstrip()) :]
            sentence = PROMPT_NOT_SHARED(self.locale) + (ending or " ")
        sentence, kinds = redact_pii(
            sentence, locale=self.locale, own_phones=self.own_phones, own_emails=self.own_emails
        )
        state.redactions.extend(kinds)
        sentence, flags = neutralize_mentions(sentence)
        if flags:
            state.mentions_neutralized = True
        return sentence


class StreamingOutputGuard:
    """Buffers a streamed answer to sentence boundaries and releases only checked text.

    `await feed(delta)` returns the newly released, checked text (often ""); `await finish()` checks
    the unfinished tail and returns the full final text, which always starts with everything released.
    """

    def __init__(self, guard: OutputGuard, *, outcomes: Iterable[Any]) -> None:
        self.guard = guard
        self.checker = ClaimChecker(
            outcomes=outcomes,
            store=guard.store,
            locale=guard.locale,
            actor=guard.actor,
            thread_id=guard.thread_id,
        )
        self.redactions: list[str] = []
        self.prompt_leaks = 0
        self.mentions_neutralized = False
        self._buffer = ""
        self._released: list[str] = []
        self._finished = False

    @property
    def text(self) -> str:
        """Everything released so far."""
        return "".join(self._released)

    async def _release(self, sentences: Iterable[str]) -> str:
        out = []
        for sentence in sentences:
            checked = await self.checker.check(sentence)
            out.append(self.guard._clean(checked, self))
        piece = "".join(out)
        self._released.append(piece)
        return piece

    async def feed(self, delta: str) -> str:
        if self._finished:
            raise RuntimeError("feed() after finish()")
        self._buffer += delta
        sentences, self._buffer = split_sentences(self._buffer)
        if not sentences:
            return ""
        return await self._release(sentences)

    async def finish(self) -> str:
        if not self._finished:
            self._finished = True
            rest, self._buffer = self._buffer, ""
            if rest:
                await self._release([rest])
        return self.text

    def verdict(self) -> OutputVerdict:
        return OutputVerdict(
            text=self.text,
            replaced=self.checker.replaced,
            redactions=list(self.redactions),
            details=list(self.checker.details),
            mentions_neutralized=self.mentions_neutralized,
        )


__all__ = [
    "ClaimChecker",
    "ClaimVerdict",
    "OutputGuard",
    "OutputVerdict",
    "StreamingOutputGuard",
    "check_claims",
    "parse_claim",
    "redact_pii",
    "split_sentences",
    "truthful_sentence",
]
