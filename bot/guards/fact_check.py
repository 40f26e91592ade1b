"""The fact check: every fact a sentence of the answer states must be backed by the run's `Evidence`.

A sentence with an unbacked or contradicted fact is not delivered. It is replaced by the backed fact —
the policy passage's own sentence with its citation, the looked-up order's status — or, when nothing
backs it, by an honest "확인 후 안내" line that offers a person. A sentence written for the model (a tool
result's note) is dropped. Each replacement is logged with the run id, counted and audited. In `observe`
mode the check only records what it would have withheld and delivers the sentence unchanged.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from bot.guard_rules import Quirks
from bot.guards.claims import in_place_of
from bot.guards.dates import weekday_errors
from bot.guards.evidence import Evidence, Passage, grams, is_one_unit, order_sentence, squash
from bot.guards.facts import DATE, DURATION, NUMERIC_KINDS, ORDER, STATUS, Fact, extract_facts, same_counted
from bot.guards.paraphrase import clause_of, contradicting, short_clause_inside, unrelated
from bot.vocabulary.catalogue import Text
from bot.vocabulary.model_notes import is_model_note as _is_model_note

log = logging.getLogger(__name__)

ENFORCE, OBSERVE, OFF = "enforce", "observe", "off"
MODES = (ENFORCE, OBSERVE, OFF)

TO_CONFIRM = Text(
    "이 부분은 정확한 정보를 확인한 후 안내해 드리겠습니다. 원하시면 운영진(사람 상담원)에게 바로 연결해 드릴게요.",
    "I need to check this before I can tell you for sure. If you like, I can connect you with a staff "
    "member (a person) right away.",
)
"""What stands in for a sentence whose fact nothing backs."""

FACT_WITHHELD = "guard.fact_withheld"
"""The audit action of a withheld sentence."""
FACT_UNBACKED = "guard.fact_unbacked"
"""The audit action of a sentence `observe` mode let through with an unbacked fact."""

MODEL_NOTE = "model_note"
"""The `kind` of a dropped sentence that was written for the model."""
ITEM = "item"
ECHO = "echo"
"""The `kind` of a dropped sentence that repeats the player's own words (seen live, 2026-12-03: a small
model's streamed answer began with the player's question, quoted, before the answer)."""
ECHO_MIN_CHARS = 12
"""Letters and digits a repeated sentence must have to count as an echo ("ORD101 맞나요?" does not)."""
"""The `kind` of a sentence that gives an order another order's item."""

_OPEN, _CLOSE = "'‘\"“「『《", "'’\"”」』》"
_QUOTE = rf"[{_OPEN}](?P<q>[^{_OPEN}{_CLOSE}\n]{{2,40}})[{_CLOSE}]"
_BOUGHT = r"(?:주문하신|구매하신|주문한|구매한|주문\s*상품(?:은|인)?|상품(?:은|인)?|ordered|purchased|bought|order\s+(?:for|of))"
_CODE = re.compile(r"[A-Z0-9][A-Z0-9-]{3,}")


_ID = r"(?<![A-Za-z0-9])(?P<id>[A-Za-z0-9][A-Za-z0-9_-]*+)"
"""Any id-like word: the patterns below are compiled once and the id each match names is compared after
(a pattern per order id was compiled per run: 2 ms of a run's loop time in the 200-conversation burst).
It starts where a word starts and takes the whole word (possessive): tried inside every word and at every
length of it, the patterns cost ~75 µs an English sentence. Neither changes a match: one found inside a
word is found from its start too, and what may follow the id (spaces, 번, 주문/order, a bracket or a
quote) never needs the id's last letters unless the whole word's match succeeds first."""
_NAMED = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"{_ID}\s*(?:번\s*)?(?:주문|order)?\s*[(\[](?P<n>[^)\]\n]{{2,40}})[)\]]",
        rf"{_ID}\s*(?:번\s*)?(?:주문|order)?\s*(?:의\s*)?{_QUOTE}",
        rf"{_QUOTE}\s*[(\[]?\s*{_ID}",
    )
)
_BOUGHT_QUOTE = re.compile(rf"{_BOUGHT}\s*{_QUOTE}", re.IGNORECASE)
_QUOTE_MARK = re.compile(rf"[{_OPEN}{_CLOSE}]")
"""A quote needs two of these (an opening and a closing one) and a bracket "(" or "[": a sentence with
neither names nothing, and the patterns (~30 µs a long English sentence) need not run ("isn't" has one)."""


def named_things(order: str, body: str) -> list[str]:
    """What a sentence says `order` is: a bracket or quote right after its id ("ORD101(전설의 검)",
    "ORD101 '전설의 검'"), a quote right before it ("'전설의 검'(ORD101)"), or a quote after words of
    buying ("주문하신 '전설의 검'", "you ordered 'Dragon Sword'")."""
    bracket = "(" in body or "[" in body
    quoted = len(_QUOTE_MARK.findall(body)) >= 2
    if not (bracket or quoted):
        return []
    wanted = order.upper()
    found: list[str] = []
    for pattern in _NAMED if quoted else _NAMED[:1]:
        for m in pattern.finditer(body):
            if m.group("id").upper() == wanted:
                found.append((m.groupdict().get("n") or m.group("q")).strip())
    if quoted:
        found.extend(m.group("q").strip() for m in _BOUGHT_QUOTE.finditer(body))
    return found


is_model_note = lru_cache(maxsize=1024)(_is_model_note)
"""`bot.vocabulary.model_notes.is_model_note`, once per sentence: the voice rules and the fact check both
ask (twenty patterns, the costliest step of a plain sentence)."""

_NOTE_WORD = re.compile(r"[\w'’]+")

PASSAGE_MATCH = 0.25
"""Share of the sentence's bigrams a passage sentence must share to answer for it."""
PLAYER_CONTRADICTION_MATCH = 0.35
"""A number only the player wrote is overruled by a passage only when the passage is clearly about it."""


@dataclass(frozen=True)
class Finding:
    """Why a sentence may not be delivered, and what stands in its place (None: the honest line)."""

    kind: str
    fact: str
    why: str
    replacement: str | None = None
    citation: str | None = None
    rule: str = ""
    """The name of the sentence rule that found it (`bot.guards.pipeline`)."""


Recorder = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass
class FactChecker:
    """Checks the sentences of one answer against one run's evidence."""

    evidence: Evidence
    locale: str = "ko"
    mode: str = ENFORCE
    record: Recorder | None = None
    """Awaited with each withheld (or, observing, would-be-withheld) sentence's detail."""
    details: list[dict[str, Any]] = field(default_factory=list)
    notes: frozenset[tuple[str, ...]] = frozenset()
    """Runs of words of the engine's notes to the model in this run (tagged by the engine)."""
    quirks: Quirks = field(default_factory=Quirks)
    """The model's quirk modes: model notes and echoes are quirks of small models (`bot.guard_rules`)."""
    _written: set[str] = field(default_factory=set)
    _said: set[str] = field(default_factory=set)
    """The sentences stating a fact delivered so far, squashed: one said again is dropped."""

    @property
    def withheld(self) -> int:
        return sum(1 for d in self.details if d["mode"] == ENFORCE)

    @property
    def unbacked(self) -> int:
        """Sentences with an unbacked fact (or a model note) the model wrote, withheld or not."""
        return len(self.details)

    async def check(self, sentence: str) -> str:
        if self.mode == OFF:
            return sentence
        body = sentence.strip()
        if not body:
            return sentence
        # The facts once for both rules (`states_no_fact` answers a sentence stating none in ~0.5 µs: the
        # answer's first sentence is mostly one, and its check sits before the first released text).
        facts = extract_facts(body)
        finding = self._find(body, facts)
        if finding is None and len(body) >= ECHO_MIN_CHARS:
            finding = self._repeated(body, facts)
        if finding is None:
            return sentence
        written = set(self._written)
        replacement = self._replacement(finding, sentence)
        covered = not replacement.strip() and finding.kind not in (MODEL_NOTE, ECHO)
        detail = {
            "kind": finding.kind,
            "fact": finding.fact,
            "why": finding.why,
            "removed": sentence.strip(),
            "replacement": replacement.strip() or None,
            "mode": self.mode,
            "rule": finding.rule,
        }
        if covered and written:
            detail["covered_by"] = sorted(written)[0] if len(written) == 1 else "an earlier line"
        self.details.append(detail)
        if self.record is not None:
            await self.record(detail)
        return sentence if self.mode == OBSERVE else replacement

    def _replacement(self, finding: Finding, sentence: str) -> str:
        if finding.kind in (MODEL_NOTE, ECHO):
            return ""
        text = finding.replacement or TO_CONFIRM(self.locale)
        if finding.citation and finding.citation not in text:
            text = f"{text.rstrip()} {finding.citation}"
        if text in self._written:
            # Said once is enough: the line already written covers this sentence too (the honest line
            # speaks of "this part", the passage's sentence is the same); the detail records it.
            return ""
        self._written.add(text)
        return in_place_of(sentence, text)

    # ---- judging one sentence -----------------------------------------------------------------------

    def find(self, body: str) -> Finding | None:
        """What is wrong with `body`, or None when every fact it states is backed."""
        return self._find(body, extract_facts(body))

    def _find(self, body: str, facts: list[Fact]) -> Finding | None:
        if is_model_note(body) and self.quirks.acts("model_notes", f"dropped a model note: {body[:80]!r}"):
            return Finding(MODEL_NOTE, body, "text written for the model", rule="fact.model_note")
        # `notes` and the length asked here first: the calls cost more than the tests on a short sentence.
        if (
            self.notes
            and self._quotes_a_note(body)
            and self.quirks.acts("model_notes", f"dropped a note: {body[:80]!r}")
        ):
            return Finding(MODEL_NOTE, body, "the engine's note to the model", rule="fact.engine_note")
        if (
            len(body) >= ECHO_MIN_CHARS
            and self._echoes(body)
            and self.quirks.acts("echo", f"dropped the player's words: {body[:80]!r}")
        ):
            return Finding(ECHO, body, "the player's own words repeated, not an answer", rule="fact.echo")
        if not facts:
            return None
        return (
            self._weekdays(body)
            or self._status(facts)
            or self._item(facts, body)
            or self._orders(facts)
            or self._numbers(facts, body)
        )

    def _quotes_a_note(self, body: str) -> bool:
        """Whether the sentence repeats a run of words of one of the engine's notes to the model."""
        if not self.notes:
            return False
        words = _NOTE_WORD.findall(body.lower())
        size = len(next(iter(self.notes)))
        return any(tuple(words[i : i + size]) in self.notes for i in range(len(words) - size + 1))

    def _repeated(self, body: str, facts: list[Fact]) -> Finding | None:
        """A sentence stating a fact (an amount, a code, an order, a date) that this answer already said
        word for word (seen live, 2026-12-03: a small model's streamed answer said "You have successfully
        issued a 20,000 KRW coupon …" twice). Only a fact's sentence: a list whose items end alike
        ("확인해 주세요.") says its plain sentences again by design, and dropping them cut real answers."""
        if len(body) < ECHO_MIN_CHARS:
            return None  # squashing only shortens it: too short to count (the first, short line is common)
        mine = squash(body)
        if len(mine) < ECHO_MIN_CHARS or not (facts or _CODE.search(body)):
            return None
        if mine in self._said and self.quirks.acts("echo", f"dropped a repeated sentence: {body[:80]!r}"):
            return Finding(ECHO, body, "the answer already said this sentence", rule="fact.repeated")
        self._said.add(mine)
        return None

    def _echoes(self, body: str) -> bool:
        """Whether the sentence is nothing but a piece of a player's message, word for word."""
        if len(body) < ECHO_MIN_CHARS:
            return False  # squashing only shortens it
        mine = squash(body)
        return len(mine) >= ECHO_MIN_CHARS and any(mine in said for said in self.evidence.player_said)

    def _item(self, facts: list[Fact], body: str) -> Finding | None:
        """An order named with another order's item (a model mixing up two orders of a listing)."""
        items = self.evidence.order_items
        for order in (f.value for f in facts if f.kind == ORDER):
            mine = items.get(order)
            if not mine or mine in body:
                continue
            other = next((i for o, i in items.items() if o != order and i and i in body), None)
            if other is None:
                other = self._invented_item(order, mine, body)
            if other is not None:
                known = self.evidence.order_statuses.get(order)
                replacement = self._order_sentence(order, known) if known else None
                return Finding(
                    ITEM, f"{order} {other}", f"{order} is {mine}, not {other}", replacement, rule="fact.item"
                )
        return None

    def _invented_item(self, order: str, mine: str, body: str) -> str | None:
        """A name the sentence gives `order` (quoted, or in brackets beside its id) that is not its item
        and that no observation or player message wrote: an item the model made up."""
        for name in named_things(order, body):
            squashed = squash(name)
            if not squashed or squashed in squash(mine) or squash(mine) in squashed:
                continue
            if extract_facts(name) or _CODE.fullmatch(name) or self.evidence.wrote(name):
                continue  # a status, amount or date in brackets, a coupon code, or a name someone wrote
            return name
        return None

    def _status(self, facts: list[Fact]) -> Finding | None:
        ev = self.evidence
        said = {f.value for f in facts if f.kind == STATUS}
        if not said:
            return None
        for order in (f.value for f in facts if f.kind == ORDER):
            known = ev.order_statuses.get(order)
            if known and not (said & known):
                return Finding(
                    STATUS,
                    f"{order} {'/'.join(sorted(said))}",
                    f"the lookup says {order} is {'/'.join(sorted(known))}",
                    self._order_sentence(order, known),
                    rule="fact.status",
                )
        for f in facts:
            if f.kind == STATUS and not ev.backs(f):
                orders = [g.value for g in facts if g.kind == ORDER]
                found = next((o for o in orders if o in ev.order_statuses), None)
                if not orders and len(ev.order_statuses) == 1:
                    # "Your order has been delivered." with one order looked up: it is that order's
                    # status the sentence got wrong, so the player gets the right one (seen live).
                    found = next(iter(ev.order_statuses))
                return Finding(
                    STATUS,
                    f.value,
                    "no lookup or message backs this status",
                    self._order_sentence(found, ev.order_statuses[found]) if found else None,
                    rule="fact.status",
                )
        return None

    def _order_sentence(self, order: str, known: set[str]) -> str:
        looked_up = self.evidence.orders.get(order)
        if looked_up is not None:
            return order_sentence(looked_up, self.locale)
        item = self.evidence.order_items.get(order)
        return order_sentence({"id": order, "status": sorted(known)[0], "item": item}, self.locale)

    def _orders(self, facts: list[Fact]) -> Finding | None:
        for f in facts:
            if f.kind == ORDER and not self.evidence.backs(f):
                return Finding(ORDER, f.value, "no message or result names this order", rule="fact.order")
        return None

    def _numbers(self, facts: list[Fact], body: str) -> Finding | None:
        ev = self.evidence
        stated = frozenset(f.key for f in facts)
        numbers = frozenset(f.key for f in facts if f.kind in NUMERIC_KINDS and not is_one_unit(f))
        for f in facts:
            # A count is backed only by a count of the same thing ("1 reward box" is not "1 order").
            trusted = f.key in ev.trusted and ev.counts_the_same(f)
            if (trusted or is_one_unit(f)) and f.kind in NUMERIC_KINDS:
                other = contradicting(
                    body, f.key, f.kind, ev.passages, stated=stated, also_backing=[*ev.rules, *ev.notices]
                )
                if other is not None:  # backed by the results, but not by the sentence it paraphrases
                    return Finding(
                        f.kind,
                        f.text,
                        "the policy passage says otherwise",
                        other.sentence,
                        other.citation,
                        rule="fact.paraphrased_passage",
                    )
                if self._only_elsewhere(f, body, stated, numbers):
                    return Finding(
                        f.kind, f.text, "only sentences about something else state it", rule="fact.about_else"
                    )
            if f.kind in (ORDER, STATUS) or trusted or is_one_unit(f):
                continue
            if self._computed(f, facts):
                continue
            passage = self._passage(body, f) if f.kind in NUMERIC_KINDS else None
            if f.key in ev.player_own:
                continue  # the player's own situation: a general rule does not contradict it
            if f.key in ev.player:
                if passage is None or passage[1] < PLAYER_CONTRADICTION_MATCH:
                    continue
                p = passage[0]
                if any(g.key == f.key for g in p.facts):
                    continue
                return Finding(
                    f.kind,
                    f.text,
                    "the policy passage says otherwise",
                    p.sentence,
                    p.citation,
                    "fact.player_rule",
                )
            if passage is not None:
                p = passage[0]
                return Finding(
                    f.kind,
                    f.text,
                    "the policy passage says otherwise",
                    p.sentence,
                    p.citation,
                    "fact.passage",
                )
            notice = self._passage(body, f, ev.notices)
            if notice is not None:  # an open incident's notice says otherwise: its own sentence stands
                return Finding(
                    f.kind,
                    f.text,
                    "the incident notice says otherwise",
                    notice[0].sentence,
                    rule="fact.notice",
                )
            rule = self._passage(body, f, ev.rules) if f.kind in NUMERIC_KINDS else None
            if rule is not None:
                return Finding(
                    f.kind,
                    f.text,
                    "the coupon rules say otherwise",
                    rule[0].sentence,
                    rule="fact.coupon_rules",
                )
            named = [g.value for g in facts if g.kind == ORDER and g.value in ev.orders]
            if named:
                order = ev.orders[named[0]]
                return Finding(
                    f.kind,
                    f.text,
                    "the lookup says otherwise",
                    order_sentence(order, self.locale),
                    rule="fact.lookup",
                )
            return Finding(f.kind, f.text, "nothing this conversation saw backs it", rule="fact.unbacked")
        return None

    def _computed(self, f: Fact, facts: list[Fact]) -> bool:
        """A date or a duration the answer computed from what the evidence states (`bot.guards.dates`):
        today + a window, the player's date + a policy window, the two ends of a notice's window."""
        calendar = self.evidence.calendar
        if f.kind == DATE:
            return calendar.backs_date(f.value, facts)
        if f.kind == DURATION:
            return calendar.backs_duration(int(f.value), facts)
        return False

    def _weekdays(self, body: str) -> Finding | None:
        """A weekday name beside a date it does not fall on ("Tuesday, March 9" for a Monday)."""
        errors = weekday_errors(body, self.evidence.calendar.today)
        if not errors:
            return None
        words, real = errors[0]
        return Finding(DATE, words, f"that date is a {real}", rule="fact.weekday")

    def _only_elsewhere(
        self, f: Fact, body: str, stated: frozenset[Any], numbers: frozenset[Any] = frozenset()
    ) -> bool:
        """A number only policy sentences, rules or notices back, all of them about something else.

        `numbers`: every number the sentence states. Two or more of them stated together by one source
        sentence make the sentence that one's paraphrase, whatever its other words (seen live: "… 달력 날짜
        기준으로 3장, 합계 50,000원입니다." for the rule "하루 최대 3장, 합계 50,000원")."""
        ev = self.evidence
        if f.key in ev.player or ev.is_specific(f) or is_one_unit(f) or f.key not in ev.trusted:
            return False
        sources = (*ev.passages, *ev.rules, *ev.notices)
        stating = [p for p in sources if f.key in p.keys]
        if len(numbers) >= 2 and any(numbers <= p.keys for p in stating):
            return False
        others = stated - {f.key}
        joined = [p for p in sources if f.key not in p.keys and not others.isdisjoint(p.keys)]
        if not unrelated(body, stating, joined=joined):
            return False
        # The number's own clause decides when it has words enough: a clause added after it ("…, but only
        # for delayed orders") does not make a rule's number about something else.
        clause = clause_of(body, f.text)
        if clause is None:
            return not short_clause_inside(body, f.text, stating)
        return unrelated(clause, stating, joined=joined)

    def _passage(
        self, body: str, fact: Fact, passages: list[Passage] | None = None
    ) -> tuple[Passage, float] | None:
        """The passage sentence about the same thing (most shared bigrams) that states a fact of `fact`'s
        kind (for a count, of the same thing: a boxes sentence is not answered with the coupons rule)."""
        kind = fact.kind
        mine = grams(body)
        if not mine:
            return None
        best: tuple[Passage, float] | None = None
        for p in self.evidence.passages if passages is None else passages:
            if kind not in p.kinds or not any(g.kind == kind and same_counted(g, fact) for g in p.facts):
                continue
            score = len(mine & p.grams) / len(mine)
            if score >= PASSAGE_MATCH and (best is None or score > best[1]):
                best = (p, score)
        return best
