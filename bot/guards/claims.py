"""What a sentence of the bot's answer claims about coupons: "issued" / "already issued" claims, coupon
codes, order ids and amounts (its sentences are split by `bot.vocabulary.sentences`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bot.guards.facts import fold_case
from tools.money import find_krw_amounts

_LIST_ITEM = re.compile(r"^(\s*(?:[-*+•]|\d{1,2}[.)])\s+)(?:\*\*|__)?")
"""A Markdown list item's marker at the start of a sentence ("- ", "2. ", "  * ")."""


def in_place_of(sentence: str, text: str) -> str:
    """`text` standing where `sentence` stood, in its form: the same leading space and list marker (a
    replaced list item stays an item of its own, never prose mid-list) and the same line ending. An
    empty `text` removes the sentence whole, marker included."""
    if not text:
        return ""
    m = _LIST_ITEM.match(sentence)
    lead = m.group(1) if m else sentence[: len(sentence) - len(sentence.lstrip())]
    tail = sentence[len(sentence.rstrip()) :]
    return lead + text.strip() + (tail or " ")


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

# Cheap tests first: the English patterns above each need one of these words, matched the same way
# (case ignored: looked for in the sentence case-folded, `bot.guards.facts.fold_case`); most sentences
# about coupons have none ("I'm sorry — you've already received 3 coupons today …" ran all nine patterns,
# ~150 µs), and a substring test costs less than a pattern's scan.
_ISSUED_WORD = ("issued",)
"""`_CLAIM_EN`: every pattern needs "issued"."""
_CONTEXT_VERBS = ("granted", "sent", "added", "credited", "applied", "created")
"""`_CLAIM_EN_CONTEXT`: every pattern needs one of its verbs."""
_ALREADY_WORD = ("already",)
"""`_ALREADY_EN`: each alternative needs "already"."""
_CONTEXT_WORDS = ("쿠폰", "보상", "coupon", "voucher", "compensation", "credit")
"""A sentence with one of these words is about a coupon (where "지급했습니다" means one)."""


def _may(words: tuple[str, ...], folded: str) -> bool:
    return any(w in folded for w in words)


_COUPON_CODE = re.compile(r"(?<![A-Za-z0-9])ARCA-[A-Z0-9]{4}-[A-Z0-9]{4}(?![A-Za-z0-9])", re.IGNORECASE)
_ORDER_ID = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{2,5}\d{2,})(?![A-Za-z0-9])")
_SPECIFIC_AFTER = re.compile(
    r"\s*(?:짜리|상당의|상당|의)?\s*(?:보상\s*)?(?:할인\s*)?(?:쿠폰|coupon|voucher)"
    r"|\s*(?:을|를)?\s*(?:발급|지급)",  # "총 40,000원을 발급했습니다": the amount is what was issued
    re.IGNORECASE,
)
_SPECIFIC_BEFORE = re.compile(r"(?:coupon|voucher)\s+(?:of|for|worth)\s*$", re.IGNORECASE)


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


_MAY_CLAIM = (
    "발급", "지급", "적립", "쿠폰", "issue", "grant", "sent", "added", "credit", "applied", "created", "coupon",
    "voucher", "arca-",
)  # fmt: skip
"""Cheap test first (in the sentence case-folded): a sentence with none of these words claims nothing
(every claim pattern and a coupon code need one); the claim patterns cost ~100 µs a sentence, most
sentences have none of them."""
_SPACE_RUN = re.compile(r"\s+")
_ODD_SPACE = re.compile(r"\s\s|[^\S ]")
"""Whitespace `_SPACE_RUN` would change (two in a row, or one that is not a space): most sentences have
none, and replacing each single space by itself cost ~15 µs a long sentence."""


def parse_claim(sentence: str) -> Claim:
    """Find issue / already-issued claims, coupon codes, order ids and amounts in one sentence."""
    folded = fold_case(sentence)
    if not _may(_MAY_CLAIM, folded):
        return Claim()
    text = _SPACE_RUN.sub(" ", sentence) if _ODD_SPACE.search(sentence) else sentence
    context = _may(_CONTEXT_WORDS, folded)
    issued = _first_positive(_CLAIM_KO, text, english=False) or (
        _may(_ISSUED_WORD, folded) and _first_positive(_CLAIM_EN, text, english=True)
    )
    if not issued and context:
        issued = _first_positive(_CLAIM_KO_CONTEXT, text, english=False) or (
            _may(_CONTEXT_VERBS, folded) and _first_positive(_CLAIM_EN_CONTEXT, text, english=True)
        )
    already = bool(_ALREADY_KO.search(text)) or (
        _may(_ALREADY_WORD, folded) and _first_positive([_ALREADY_EN], text, english=True)
    )
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
