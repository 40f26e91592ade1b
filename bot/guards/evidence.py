"""What may back a fact the bot states, built once per run: this run's tool results, earlier tool results
of the same conversation, the player's own messages, the open incidents' notices in the run's scope, and
the bot's fixed texts (coupon rules, catalogue, the bot's own stop notices). Pure: the caller reads memory and the rules and hands the texts in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from datetime import date
from functools import lru_cache
from typing import Any

from bot.guards.dates import Calendar
from bot.guards.facts import AMOUNT, COUNT, DATE, DURATION, ORDER, STATUS, Fact, counted, extract_facts
from bot.vocabulary import catalogue
from bot.vocabulary.catalogue import Text
from bot.vocabulary.model_notes import without_examples
from bot.vocabulary.sentences import player_sentences, sentences
from tools.money import format_krw
from tools.order_views import status_label
from tools.policy_search import EXCERPTS_OPEN
from tools.requirements import is_policy_question

ONE_UNIT = frozenset({(COUNT, 1), (DURATION, 60), (DURATION, 1440)})
""""1회", "한 번", "하루", "1 hour": a rate's unit ("하루 최대 3장"), never a figure the model can get wrong
on its own; the figure beside it is checked. Only when written as one ("24시간" is a figure)."""
_NOT_ONE = re.compile(r"[02-9]|1\d")


_EN_DIGIT_ONE = re.compile(r"(?<!\d)1\s*[A-Za-z]")
"""An English "1 day" / "1 hour" is a figure ("you have 1 day to get a refund", seen live for 7 days): in
English a rate's unit is written "a day" / "per day". Korean writes rates as "1일 최대 3장"."""


def is_one_unit(fact: Fact) -> bool:
    return fact.key in ONE_UNIT and not _NOT_ONE.search(fact.text) and not _EN_DIGIT_ONE.search(fact.text)


@dataclass(frozen=True)
class Passage:
    """One sentence of a policy excerpt the search returned, with its citation label."""

    sentence: str
    citation: str
    facts: tuple[Fact, ...]
    grams: frozenset[str]
    keys: frozenset[tuple[str, Any]] = field(init=False, repr=False, compare=False)
    """Its facts' keys and kinds, worked out once: the fact check asks each answer sentence's facts
    against every passage."""
    kinds: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", frozenset(f.key for f in self.facts))
        object.__setattr__(self, "kinds", frozenset(f.kind for f in self.facts))


@dataclass
class Evidence:
    """Everything one run's answer may state, by normalised fact."""

    trusted: set[tuple[str, Any]] = field(default_factory=set)
    """Facts of observations (this run and earlier) and of the bot's fixed texts."""
    player: set[tuple[str, Any]] = field(default_factory=set)
    """Facts the player wrote (this turn and earlier ones in the thread)."""
    order_statuses: dict[str, set[str]] = field(default_factory=dict)
    """What lookups said about each order's status (this run's results override earlier text)."""
    orders: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """This run's looked-up orders (`lookup_order` data), for the replacement sentence."""
    passages: list[Passage] = field(default_factory=list)
    rules: list[Passage] = field(default_factory=list)
    """The coupon rules as sentences in the conversation's language: what stands in for an unbacked
    number about coupons when no policy passage was searched."""
    specific: set[tuple[str, Any]] = field(default_factory=set)
    """Facts stated outside the policy sentences, the coupon rules and the notices (a lookup, a coupon's
    result, an earlier turn's results, the catalogue): such a number needs no related policy sentence."""
    order_items: dict[str, str] = field(default_factory=dict)
    """Each order's item as a lookup or a listing named it (this run and earlier in the thread)."""
    notices: list[Passage] = field(default_factory=list)
    """The open incidents' notices as sentences: they back what they state, and one about the same
    thing stands in for a sentence that contradicts it (a time, a date, a duration)."""

    specific_counts: dict[Any, set[str | None]] = field(default_factory=dict)
    """The same for the counts among `specific`."""
    counts: dict[Any, set[str | None]] = field(default_factory=dict)
    """For each count the trusted texts state, what it counted there (`facts.counted`; None: a generic
    counter)."""

    player_own: set[tuple[str, Any]] = field(default_factory=set)
    """The player's numbers about their own situation ("산 지 10일 됐어요", "I got 2 coupons today"), not
    a rule they ask to have confirmed ("환불 14일 맞죠?"): a passage about the general rule does not
    contradict them."""
    calendar: Calendar = field(default_factory=Calendar)
    """The dates and windows the evidence states: what a computed date or duration stands on
    (`bot.guards.dates`). Built per run, never cached with the fixed texts."""

    seen: list[str] = field(default_factory=list)
    player_said: list[str] = field(default_factory=list)
    """The player's messages, squashed: a sentence of the answer that only repeats one is not an answer."""
    """Every observation and player text, squashed (`squash`): a name the answer quotes is backed when
    one of them wrote it."""

    def copy(self) -> Evidence:
        """A copy whose sets, maps and lists (and the sets in its maps) are its own: a cached base is
        never changed in place."""
        return Evidence(**{f.name: _own(getattr(self, f.name)) for f in dataclass_fields(self)})

    def wrote(self, phrase: str) -> bool:
        """Whether any observation or player text wrote `phrase` (spacing and case aside)."""
        needle = squash(phrase)
        return bool(needle) and any(needle in text for text in self.seen)

    def counts_the_same(self, fact: Fact, *, specific: bool = False) -> bool:
        """Whether a trusted (`specific`: a specific) text states this count of the same thing, or with a
        generic counter, or the fact's own counter is generic: "1 reward box" is not backed by a listing's
        "1 order"."""
        mine = counted(fact)
        if mine is None:
            return True
        there = (self.specific_counts if specific else self.counts).get(fact.value, set())
        return not there or mine in there or None in there

    def is_specific(self, fact: Fact) -> bool:
        """A fact stated outside policy sentences, rules and notices (of the same thing, for a count)."""
        return fact.key in self.specific and (fact.kind != COUNT or self.counts_the_same(fact, specific=True))

    def add_specific_text(self, text: str, *, leave_out: frozenset[tuple[str, Any]] = frozenset()) -> None:
        found, _statuses, counted_here = _trusted_facts(text)
        self.specific.update(found - leave_out)
        for value, what in counted_here:
            if (COUNT, value) not in leave_out:
                self.specific_counts.setdefault(value, set()).add(what)

    def backs(self, fact: Fact) -> bool:
        return fact.key in self.trusted or fact.key in self.player or is_one_unit(fact)

    def add_trusted_text(self, text: str) -> None:
        self.seen.append(squash(text))
        self.order_items.update(_order_items(text))
        found, statuses, counted_here = _trusted_facts(text)
        self.trusted.update(found)
        for value, what in counted_here:
            self.counts.setdefault(value, set()).add(what)
        for order, codes in statuses:
            self.order_statuses.setdefault(order, set()).update(codes)

    def add_player_text(self, text: str) -> None:
        self.seen.append(squash(text))
        self.player_said.append(squash(text))
        stated, own = _player_facts(text)
        self.player.update(stated)
        self.player_own.update(own)


_OWN_EVENT = re.compile(
    r"샀|산\s*지|구매했|구입했|결제했|충전했|받았|받은|주문했|됐는데|지났|전에|어제|오늘\s*\S*했"
    r"|\b(?:ago|bought|purchased|paid|got|received|ordered|charged|spent|yesterday)\b",
    re.IGNORECASE,
)
"""Words of something that happened to the player: their number is about them, not about a rule."""


@lru_cache(maxsize=2048)
def _player_facts(text: str) -> tuple[frozenset[tuple[str, Any]], frozenset[tuple[str, Any]]]:
    """(every fact key a player's message states, those about the player's own situation). Cached: a
    thread's messages are read again each run."""
    own: set[tuple[str, Any]] = set()
    for sentence in player_sentences(text):
        if _OWN_EVENT.search(sentence) or not is_policy_question(sentence):
            own.update(keys(extract_facts(sentence)))
    return frozenset(keys(extract_facts(text))), frozenset(own)


def _own(value: Any) -> Any:
    if isinstance(value, Calendar):
        return Calendar(value.today)
    if isinstance(value, dict):
        return {k: set(v) if isinstance(v, set) else v for k, v in value.items()}
    return type(value)(value)


_NOT_LETTER = re.compile(r"[\W_]+")
_WORD = re.compile(r"[^\W\d_]+")


@lru_cache(maxsize=4096)  # a thread's texts are squashed again each run
def squash(text: str) -> str:
    """`text` lower-cased without spaces or punctuation, for comparing names however they are spaced."""
    return _NOT_LETTER.sub("", text.lower())


_ORDER_ITEM = re.compile(
    r"(?:주문|Order)\s+(?P<id>[A-Za-z]{2,5}\d{2,}):\s*(?P<item>[^,\n]{1,60}),"
    r"|^-\s*(?P<lid>[A-Za-z]{2,5}\d{2,}):\s*[^,\n]*\([a-z]+[^)]*\),\s*(?P<litem>[^,\n]{1,60}),",
    re.MULTILINE,
)
"""`주문 ORD001: 한정판 굿즈, …` (lookup_order) and `- ORD001: 배송 지연 (delayed), 한정판 굿즈, …` (list_my_orders)."""


@lru_cache(maxsize=2048)
def _order_items(text: str) -> tuple[tuple[str, str], ...]:
    """(order, item) for each order a text names with its item, in order (a later one wins). Cached: a
    thread's results are read again each run, and the scan of a policy search's result cost ~25 µs."""
    out = []
    for m in _ORDER_ITEM.finditer(text):
        order, item = m.group("id") or m.group("lid"), m.group("item") or m.group("litem")
        out.append((order.upper(), item.strip()))
    return tuple(out)


@lru_cache(maxsize=2048)
def _trusted_facts(
    text: str,
) -> tuple[
    frozenset[tuple[str, Any]], tuple[tuple[str, frozenset[str]], ...], frozenset[tuple[Any, str | None]]
]:
    """(fact keys, (order, statuses) pairs, (count, what it counts) pairs) of a trusted text. Cached:
    rules, catalogue and a thread's earlier results are the same texts run after run."""
    found: set[tuple[str, Any]] = set()
    statuses: list[tuple[str, frozenset[str]]] = []
    counts: set[tuple[Any, str | None]] = set()
    # A note to the model still carries facts ("이 플레이어는 오늘 이미 쿠폰 2장을 받아 …"); only its example
    # values ("(예: ORD001)") back nothing. Blanked before the split: "(e.g. ORD001)" splits after "e.g.".
    for sentence in sentences(without_examples(text)):
        facts = extract_facts(sentence)
        found.update(keys(facts))
        counts.update((f.value, counted(f)) for f in facts if f.kind == COUNT)
        named = [f.value for f in facts if f.kind == ORDER]
        codes = frozenset(f.value for f in facts if f.kind == STATUS)
        if len(named) == 1 and codes:
            statuses.append((named[0], codes))
    return frozenset(found), tuple(statuses), frozenset(counts)


def keys(facts: Iterable[Fact]) -> set[tuple[str, Any]]:
    """The facts' keys; a full date also backs its month and day ("2027-01-01" backs "1월 1일") and year."""
    out = set()
    for f in facts:
        out.add(f.key)
        if f.kind == DATE and len(f.value) == 10:
            out.update({(DATE, f.value[5:]), (DATE, f.value[:4])})
    return out


def grams(text: str) -> frozenset[str]:
    """Character bigrams of the words (digits left out): Korean particles do not hide a shared word."""
    words = _WORD.findall(text.lower())
    return frozenset(w[i : i + 2] for w in words for i in range(max(len(w) - 1, 1)))


def _outcome_parts(item: Any) -> tuple[str | None, str, Mapping[str, Any]]:
    """(tool name, text the model read, data) of a `ToolOutcome` or a `(name, ToolResult)` pair."""
    if isinstance(item, tuple) and len(item) == 2:
        name, result = item
        observation = None
    else:
        name, result = getattr(item, "name", None), getattr(item, "result", item)
        observation = getattr(item, "observation", None)
    message = observation or getattr(result, "message", "") or ""
    data = getattr(result, "data", None)
    return name, str(message), data if isinstance(data, Mapping) else {}


_LEAVES = frozenset({str, float, bool, type(None)})
"""Types of a result's values that are neither an amount (`bool` is an `int` but never one) nor a container."""


def _data_amounts(data: Any, depth: int = 0) -> list[int]:
    """Amounts in a result's data (`{"amount": 0}` where the message wrote "요청: 0")."""
    out: list[int] = []
    if depth > 3:
        return out
    items = data.items() if isinstance(data, Mapping) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        # Most values are neither an amount nor a container (the ABC checks below cost more).
        if type(value) in _LEAVES:
            continue
        if isinstance(value, int) and not isinstance(value, bool) and "amount" in str(key):
            out.append(value)
        elif isinstance(value, (Mapping, list)):
            out.extend(_data_amounts(value, depth + 1))
    return out


_LINE_MARK = re.compile(r"^(?:>\s*)+(?:EN\s*:\s*)?|^[-*+]\s+")
"""A policy line's Markdown, not its words: the quote of a section's English line (`> EN: …`), a bullet.
A passage sentence may become the answer's sentence (the fact check's replacement): seen 2026-12-03,
"> EN: Unused cash-shop items can be fully refunded within 7 days …" was delivered with its marker."""


def _passages(data: Mapping[str, Any]) -> list[Passage]:
    out = []
    for hit in data.get("hits") or []:
        if isinstance(hit, Mapping):
            out.extend(_hit_passages(str(hit.get("citation") or ""), str(hit.get("text") or "")))
    return out


@lru_cache(maxsize=1024)
def _hit_passages(citation: str, text: str) -> tuple[Passage, ...]:
    """A search hit's sentences that state a fact. Cached: the same sections come back search after
    search, and splitting them again sat before the answer's first byte."""
    out = []
    for sentence in sentences(text):
        sentence = _LINE_MARK.sub("", " ".join(sentence.split()))
        facts = tuple(extract_facts(sentence))
        if facts and not sentence.startswith("#"):
            out.append(Passage(sentence, citation, facts, grams(sentence)))
    return tuple(out)


def warm_policy_passages(sections: Iterable[tuple[str, str]]) -> int:
    """Read every policy section's passages now, as a search hit's are read (`_hit_passages`, keyed by
    the hit's citation and text), and the calendar facts of each passage sentence; the count of passages.

    Called at start-up with every stored section (`bot.app.make_policy_index`). The caches were filled by
    the players instead: a process's first 200-conversation burst spent ~0.5 ms of the loop per
    conversation more than a later one reading sections it had not read yet (cProfile of both bursts,
    2026-12-07: fact extraction of policy sentences ~100 ms of the burst's loop time), and its turns
    ran that much longer. The shipped policies (94 sections, 154 passages) cost ~20 ms once."""
    n = 0
    calendar = Calendar(None)
    for citation, text in sections:
        passages = _hit_passages(citation, text)
        for p in passages:
            calendar.add_text(p.sentence)
        n += len(passages)
    return n


def text_passages(texts: Iterable[str], citation: str = "") -> list[Passage]:
    """Each sentence of `texts` that states a fact, as a passage (an incident notice's sentences)."""
    out = []
    for text in texts:
        for sentence in sentences(text):
            sentence = " ".join(sentence.split())
            facts = tuple(extract_facts(sentence))
            if facts:
                out.append(Passage(sentence, citation, facts, grams(sentence)))
    return out


def rules_text(rules: Any) -> str:
    """The coupon rules as sentences: their numbers are the bot's own, in every form a reply writes them."""
    if rules is None:
        return ""
    parts = [
        f"{format_krw(rules.min_amount)} {format_krw(rules.max_amount, 'en')} {format_krw(rules.max_amount)}",
        f"{format_krw(rules.amount_step)} {format_krw(rules.daily_max_amount)} {format_krw(rules.staff_max_amount)}",
        f"{rules.daily_max_count}장 {rules.valid_days}일",
    ]
    if rules.approval_threshold:
        parts.append(format_krw(rules.approval_threshold))
    parts.append(
        "주문 "
        + " ".join(status_label(s, "ko") + " " + status_label(s, "en") for s in rules.eligible_statuses)
    )
    return ". ".join(parts) + "."


RULE_SENTENCES = {
    "ko": (
        "보상 쿠폰 1장은 {lo} 이상 {hi} 이하, {step} 단위로 발급됩니다.",
        "보상 쿠폰은 플레이어 1명당 하루 최대 {count}장, 합계 {total}까지 받을 수 있습니다.",
        "쿠폰은 발급 후 {days}일 동안 사용할 수 있습니다.",
    ),
    "en": (
        "One compensation coupon is between {lo} and {hi}, in steps of {step}.",
        "Each player can receive at most {count} compensation coupons a day, {total} in total.",
        "A coupon can be used for {days} days after it is issued.",
    ),
}


def rule_passages(rules: Any, locale: str) -> list[Passage]:
    """The coupon rules as the sentences that replace a wrong number about coupons."""
    if rules is None:
        return []
    lang = "ko" if locale == "ko" else "en"
    fields = {
        "lo": format_krw(rules.min_amount, lang),
        "hi": format_krw(rules.max_amount, lang),
        "step": format_krw(rules.amount_step, lang),
        "count": rules.daily_max_count,
        "total": format_krw(rules.daily_max_amount, lang),
        "days": rules.valid_days,
    }
    out = []
    for template in RULE_SENTENCES[lang]:
        sentence = template.format(**fields)
        out.append(Passage(sentence, "", tuple(extract_facts(sentence)), grams(sentence)))
    return out


def catalogue_texts() -> list[str]:
    """The catalogue's player-facing sentences (both languages), placeholders left out."""
    out = []
    for value in vars(catalogue).values():
        if isinstance(value, Text):
            out.extend(re.sub(r"\{[^}]*\}", " ", t) for t in (value.ko, value.en))
    return out


def build_evidence(
    *,
    outcomes: Iterable[Any] = (),
    player_texts: Iterable[str] = (),
    earlier_observations: Iterable[str] = (),
    fixed_texts: Iterable[str] = (),
    rules: list[Passage] | None = None,
    notices: Iterable[str] = (),
    today: date | None = None,
) -> Evidence:
    """The evidence of one run. `fixed_texts`: the rules, the catalogue, the bot's own stop notice;
    `notices`: the open incidents' notices in the run's scope (`bot.incidents.open_notices`); `today`: the
    clock's date in `ARCA_TIMEZONE`, the start of the windows an answer computes."""
    notices = tuple(notices)
    player_texts = tuple(player_texts)
    earlier_observations = tuple(earlier_observations)
    outcomes = list(outcomes)
    rules = list(rules or ())
    ruled = frozenset(g.key for p in rules for g in p.facts)
    ev = _fixed_evidence(tuple(fixed_texts), ruled).copy()
    ev.rules, ev.notices = rules, text_passages(notices)
    for text in [*notices, *earlier_observations]:
        ev.add_trusted_text(text)
    for text in earlier_observations:
        if EXCERPTS_OPEN not in text:  # an earlier lookup or coupon result, not policy sentences
            ev.add_specific_text(text)
    for text in player_texts:
        ev.add_player_text(text)
    for item in outcomes:
        _name, message, data = _outcome_parts(item)
        ev.add_trusted_text(message)
        amounts = [(AMOUNT, a) for a in _data_amounts(data)]
        ev.trusted.update(amounts)
        if not data.get("hits"):  # a lookup's or a coupon's result, not policy sentences
            ev.add_specific_text(message)
            ev.specific.update(amounts)
        order = data.get("order")
        if isinstance(order, Mapping) and order.get("id"):
            oid = str(order["id"]).upper()
            ev.orders[oid] = order
            if order.get("item"):
                ev.order_items[oid] = str(order["item"])
            if order.get("status"):
                ev.order_statuses[oid] = {str(order["status"])}
                ev.trusted.add((STATUS, str(order["status"])))
        for listed in data.get("orders") or []:
            if isinstance(listed, Mapping) and listed.get("id") and listed.get("status"):
                ev.order_statuses[str(listed["id"]).upper()] = {str(listed["status"])}
        ev.passages.extend(_passages(data))
    # The same sentence from two hits (overlapping chunks, a section found twice) is one passage: every
    # rule picks the first of equals, so a repeat only cost time.
    ev.passages = list(dict.fromkeys(ev.passages))
    calendar = ev.calendar = Calendar(today)
    for text in (*(p.sentence for p in rules), *notices, *earlier_observations):
        calendar.add_text(text)
    for item in outcomes:
        calendar.add_text(_outcome_parts(item)[1])
    for p in ev.passages:
        calendar.add_text(p.sentence)
    for text in player_texts:
        calendar.add_text(text, player=True)
    return ev


@lru_cache(maxsize=16)
def _fixed_evidence(fixed_texts: tuple[str, ...], ruled: frozenset[tuple[str, Any]]) -> Evidence:
    """What the bot's fixed texts back, built once (they are the same run after run, but for the day's
    date and a stop notice): every run copies it. Never changed in place."""
    ev = Evidence()
    for text in fixed_texts:
        ev.add_trusted_text(text)
        ev.add_specific_text(text, leave_out=ruled)
    return ev


def order_sentence(order: Mapping[str, Any], locale: str) -> str:
    """The looked-up order in one sentence to the player."""
    oid, item, status = order.get("id"), order.get("item"), str(order.get("status") or "")
    amount = order.get("amount")
    ko_label = status_label(status, "ko").split(" (")[0]
    en_label = status_label(status, "en").split(" (")[0]
    parts = [str(item)] if item else []
    if amount is not None:
        parts.append(format_krw(amount, locale))
    if locale == "ko":
        what = f"({', '.join(parts)})" if parts else ""
        return f"주문 {oid}{what}의 현재 상태는 {ko_label}입니다."
    what = f" ({', '.join(parts)})" if parts else ""
    return f"Order {oid}{what} is currently {en_label.lower()}."
