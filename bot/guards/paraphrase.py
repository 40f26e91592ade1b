"""Which policy sentence an English answer sentence paraphrases, by the content words they share.

The fact check's usual matching (character bigrams, `bot.guards.evidence.grams`) suits Korean, where
particles hide shared words, but scores every English line of a section alike: "You have 30 days … to
get a refund for an unused cash shop item" matched the 7-day refund line and the defective-goods line
("… 30 days of noticing the defect") at 0.65–0.67, so a number taken from the wrong sentence of the
right result passed as backed. Content words (crudely stemmed, stop words out) tell them apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.guards.evidence import Passage

_STOP = frozenset(
    "the a an and or of to for in on at by with from your you have has can will be is are was were "
    "this that it its not no as if within after before any all our we get".split()
)
_LATIN = re.compile(r"[a-z]+")
MIN_SHARED = 3
"""Content words an answer sentence must share with a passage sentence to count as its paraphrase."""
MARGIN = 1.5
"""How much better the paraphrased sentence must match than any sentence stating the answer's value."""


def is_english(text: str) -> bool:
    letters = sum(c.isalpha() for c in text)
    return letters > 0 and sum("a" <= c.lower() <= "z" for c in text) * 2 > letters


def content_words(text: str) -> frozenset[str]:
    out = set()
    for word in _LATIN.findall(text.lower()):
        if len(word) < 3 or word in _STOP:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        out.add(word)
    return frozenset(out)


def contradicting(body: str, key: object, kind: str, passages: Iterable[Passage]) -> Passage | None:
    """The passage sentence `body` paraphrases when it states another value of `kind` than `key` and
    clearly matches better than every sentence stating `key` (None otherwise: backed, or unclear)."""
    mine = content_words(body)
    best: tuple[Passage, int] | None = None
    backing = 0
    for p in passages:
        shared = len(mine & content_words(p.sentence))
        if any(g.key == key for g in p.facts):
            backing = max(backing, shared)
        elif any(g.kind == kind for g in p.facts) and (best is None or shared > best[1]):
            best = (p, shared)
    if best is None or best[1] < MIN_SHARED or best[1] < MARGIN * max(backing, 1):
        return None
    return best[0]
