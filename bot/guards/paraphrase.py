"""Which policy sentence an English answer sentence paraphrases, by the content words they share.

The fact check's usual matching (character bigrams, `bot.guards.evidence.grams`) suits Korean, where
particles hide shared words, but scores every English line of a section alike: "You have 30 days … to
get a refund for an unused cash shop item" matched the 7-day refund line and the defective-goods line
("… 30 days of noticing the defect") at 0.65–0.67, so a number taken from the wrong sentence of the
right result passed as backed. Content words (crudely stemmed, stop words out) tell them apart.

Korean sentences are split the way the policy search splits them (`bot.knowledge.analysis.analyze`:
kiwipiepy nouns and verb stems), numbers out, so "구매 후 30일 이내 환불" is matched to the cash-shop
sentence (구매, 이내, 환불) and not to the defective-goods one that states 30일.

Kiwi costs about 6 µs a character (a short sentence: ~350 µs, on the event loop), so a Korean answer
sentence is first read by its surface (`surface_topic`): the passages' words are known (each analysed once,
`passage_words`), and which of them the sentence shows is a substring test. Only when that leaves the
answer unclear (near a threshold, or a sentence that looks unrelated) is the sentence analysed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from bot.guards.evidence import Passage
from bot.knowledge.analysis import analyze

_STOP = frozenset(
    "the a an and or of to for in on at by with from your you have has can will be is are was were "
    "this that it its not no as if within after before any all our we get until till since about around "
    "still then just so here there one two three four five six seven eight nine ten yes also".split()
)
_SAME_WORD = {
    "largest": "max", "biggest": "max", "highest": "max", "maximum": "max", "most": "max", "cap": "max",
    "limit": "max", "smallest": "min", "lowest": "min", "minimum": "min", "least": "min", "charg": "fee",
    "keep": "fee", "cost": "fee", "receiv": "get", "got": "get", "giv": "get", "worth": "amount",
    "valu": "amount",
}  # fmt: skip
"""Words a reworded sentence uses for the passage's ("the largest coupon" for "the cap", "keeps a fee" for
"charges"), after stemming."""
_PHRASES = re.compile(r"\bup\s+to\b|\bat\s+most\b|\bno\s+more\s+than\b", re.IGNORECASE)
_KOREAN_STOP = frozenset("하 있 되 수 것 않 없 이 그 때 등 경우 말".split())
"""Stems that every policy sentence has (하다, 있다, 수 있다, 경우): they tell no two sentences apart."""
_LATIN = re.compile(r"[a-z]+")
MIN_SHARED = 3
"""Content words an answer sentence must share with a passage sentence to count as its paraphrase."""
MARGIN = 1.5
"""How much better the paraphrased sentence must match than any sentence stating the answer's value."""


@lru_cache(maxsize=2048)
def is_english(text: str) -> bool:
    """Whether most of `text`'s letters are Latin. Cached: the fact check asks it of one sentence several
    times (the topic tests, the voice rules)."""
    if text.isascii():  # every letter is Latin
        return _LATIN_LETTER.search(text) is not None
    letters = sum(map(str.isalpha, text))
    return letters > 0 and len(_LATIN_LETTER.findall(text)) * 2 > letters


_LATIN_LETTER = re.compile("[A-Za-z\u0130\u212a]")
"""Every character whose `str.lower` lies between "a" and "z" (checked over all code points: the ASCII
letters, "İ" and the Kelvin sign): one scan instead of a Python loop over the characters (~10 µs)."""


def _content_words(text: str) -> frozenset[str]:
    """The words that say what `text` is about (uncached; see `content_words` and `passage_words`)."""
    if not is_english(text):
        return frozenset(t for t in analyze(text) if not t[0].isdigit() and t not in _KOREAN_STOP)
    out = set()
    for word in _LATIN.findall(_PHRASES.sub(" maximum ", text.lower())):
        if len(word) < 3 or word in _STOP:
            continue
        out.add(_stem(word))
    return frozenset(out)


content_words = lru_cache(maxsize=1024)(_content_words)
"""The words that say what an answer's `text` is about: English crudely stemmed, Korean as morphemes
(kiwipiepy: a few hundred µs a Korean sentence, so one sentence's words are worked out once)."""

passage_words = lru_cache(maxsize=4096)(_content_words)
"""`content_words` of an evidence sentence (a passage, a rule, a notice), cached apart from the answer's:
the same sections come back run after run, while an answer's sentences are new text each time."""


SURFACE_TOPIC = True
"""Read a Korean answer sentence's surface first and call Kiwi only when that is unclear. False: Kiwi
for every sentence (the differential run, `bench/fact_check_diff.py`, checks both give the same decisions)."""

_HANGUL = re.compile(r"[가-힣]+")
_NUMBER_UNIT = re.compile(
    r"^(?:만|천|백|십|억)?(?:원|일|장|개|번|회|시간|분|주|개월|년|시|퍼센트|프로|명|세|살|단계|영업일)"
)
"""The unit right after a digit ("7일", "5만", "3장까지"): part of a number, never a content word."""
_ENDINGS = frozenset(
    "습니다 입니다 이에요 예요 에요 어요 아요 해요 돼요 세요 으세요 으실 으셔야 하셔야 셔야 으시 하시 시 실 "
    "까지 부터 에서 에게 께서 으로 로 을 를 은 는 이 가 의 에 도 만 과 와 요 고 며 면 서 지 게 다 라 랍니다 "
    "라면 이라면 하고 하면 하는 한 할 된 되는 될 하지 되지 되고 돼 해 했 됐 았 었 야 죠 네 니다".split()
)
_ENDING_LENGTHS = sorted({len(e) for e in _ENDINGS}, reverse=True)
"""Particles and endings at the end of a piece of an eojeol: what is left is a content word's surface."""
RELATED_MARGIN = 0.15
"""How far above `RELATED_SHARE` the surface's share must be to decide without Kiwi: the surface counts
the sentence's other words generously (a stem with its ending left on counts), so its share errs low."""


def surface_topic(text: str, vocabulary: frozenset[str]) -> tuple[frozenset[str], int]:
    """The words of `vocabulary` (passage words) a Korean sentence shows on its surface, and how many other
    content words it seems to have. Cheap (substring tests), and close to `content_words`: a passage noun
    written in the answer is found whole; a one-syllable stem counts where a piece of an eojeol begins
    with it ("환불받으실" → 환불, 받)."""
    low = unicodedata.normalize("NFKC", text).lower()
    present = [v for v in vocabulary if v in low]
    long = sorted((v for v in present if len(v) > 1), key=len, reverse=True)
    short = frozenset(v for v in present if len(v) == 1)
    found: set[str] = set()
    others = 0
    for m in _HANGUL.finditer(low):
        run = m.group()
        if m.start() and low[m.start() - 1].isdigit():
            unit = _NUMBER_UNIT.match(run)
            run = run[unit.end() :] if unit else run
        for v in long:
            if v in run:
                found.add(v)
                run = run.replace(v, " ")
        for piece in run.split():
            if piece[0] in short:
                found.add(piece[0])
                piece = piece[1:]
            if len(_without_endings(piece)) >= 2:
                others += 1
    return frozenset(found - _KOREAN_STOP), others


def _without_endings(piece: str) -> str:
    """`piece` with the particles and endings at its end taken off, longest first (a set lookup per
    length: a regular expression of alternatives repeated to the end backtracks on long pieces)."""
    while True:
        for size in _ENDING_LENGTHS:  # a plain loop: a generator per piece cost more than the lookups
            if size <= len(piece) and piece[-size:] in _ENDINGS:
                piece = piece[:-size]
                break
        else:
            return piece


def _stem(word: str) -> str:
    """Crude: "sales" and "sale", "charges" and "charged" meet ("sal", "charg")."""
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        word = word[:-2]
    else:
        for suffix in ("ing", "ed", "s"):
            if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return _SAME_WORD.get(word, word)


def contradicting(
    body: str,
    key: object,
    kind: str,
    passages: Iterable[Passage],
    *,
    stated: frozenset[object] = frozenset(),
    also_backing: Iterable[Passage] = (),
) -> Passage | None:
    """The passage sentence `body` paraphrases when it states another value of `kind` than `key` and
    clearly matches better than every sentence stating `key` (None otherwise: backed, or unclear).

    `stated`: every fact key `body` states. A sentence with a value `body` states too is not a rival: the
    answer joined two sentences ("7일, 불량품은 … 30일"). `also_backing`: sentences that may back `key` but
    are never offered instead (the coupon rules, an incident's notice)."""
    passages = list(passages)
    if not any(_rival(p, key, kind, stated) for p in passages):
        return None  # no sentence states another value of the kind: nothing to weigh (and no analysis)
    also_backing = list(also_backing)
    if (
        SURFACE_TOPIC
        and not is_english(body)
        and _clearly_no_rival(body, key, kind, passages, stated, also_backing)
    ):
        return None
    mine = content_words(body)
    best: tuple[Passage, int] | None = None
    backing = 0
    for p in also_backing:
        if key in p.keys:
            backing = max(backing, len(mine & passage_words(p.sentence)))
    for p in passages:
        shared = len(mine & passage_words(p.sentence))
        if key in p.keys:
            backing = max(backing, shared)
        elif kind in p.kinds and (best is None or shared > best[1]):
            if any(g.key in stated for g in p.facts if g.kind == kind):
                continue  # the answer took this sentence's own value for another of its facts
            best = (p, shared)
    if best is None or best[1] < MIN_SHARED or best[1] < MARGIN * max(backing, 1):
        return None
    return best[0]


def _clearly_no_rival(
    body: str,
    key: object,
    kind: str,
    passages: list[Passage],
    stated: frozenset[object],
    also_backing: list[Passage],
) -> bool:
    """Whether the surface shows `contradicting` would find no rival: every rival shares at most one word
    with `body` (a rival needs `MIN_SHARED`), or shares too few against the best backing sentence for a
    word the surface missed to make it `MARGIN` times better."""
    words = {p.sentence: passage_words(p.sentence) for p in (*passages, *also_backing)}
    mine, _ = surface_topic(body, frozenset().union(*words.values()))
    backing = max(
        (len(mine & words[p.sentence]) for p in (*passages, *also_backing) if key in p.keys), default=0
    )
    best = max((len(mine & words[p.sentence]) for p in passages if _rival(p, key, kind, stated)), default=0)
    return best + 1 < MIN_SHARED or best + 1 < MARGIN * max(backing - 1, 1)


def _rival(p: Passage, key: object, kind: str, stated: frozenset[object]) -> bool:
    """Whether `p` may be the sentence `contradicting` offers: it states a value of `kind`, not `key`, and
    none the answer's sentence states too."""
    return (
        kind in p.kinds and key not in p.keys and not any(g.key in stated for g in p.facts if g.kind == kind)
    )


MIN_TOPIC = 3
"""Words a sentence needs, its number's unit aside, before it says what its number is about ("네,
7일입니다" or "You can get a refund within 7 days" do not: they are left alone)."""
RELATED_SHARE = 0.5
"""Share of those words a sentence stating the same number must have for the answer to be about it."""
_UNITS = frozenset(
    "day hour minut week month year krw won percent 일 시간 분 주 개월 년 원 영업일 "
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday today tomorrow".split()
)
_UNITS = frozenset(_stem(w) if w.isascii() else w for w in _UNITS)
"""A number's unit and the words of a date: they say what the number is, not what it is about."""


def unrelated(body: str, stating: Iterable[Passage], *, joined: Iterable[Passage] = ()) -> bool:
    """Whether every sentence that states the answer's number is about something else: seen live, "You have
    30 days to get a refund for an unused cash shop item" backed only by the coupon sentences ("… valid for
    30 days from issue; redeem it in the cash shop") when the search had not found the refund section."""
    sentences = list(stating)
    if not sentences:
        return False
    joined = list(joined)
    if SURFACE_TOPIC and not is_english(body) and _clearly_related(body, sentences, joined):
        return False
    mine = content_words(body) - _UNITS
    if len(mine) < MIN_TOPIC:
        return False
    # `joined`: the sentences that state the answer's other numbers; an answer that joins two sentences
    # ("7일, 불량품은 … 30일 이내") is about both, so their words count together.
    also = frozenset().union(*(passage_words(p.sentence) for p in joined))
    return all(len(mine & (passage_words(p.sentence) | also)) < RELATED_SHARE * len(mine) for p in sentences)


def _clearly_related(body: str, stating: list[Passage], joined: list[Passage]) -> bool:
    """Whether the surface shows a sentence stating the number shares well over `RELATED_SHARE` of the
    answer's words (so `unrelated` is False without Kiwi). Unclear, or unrelated by its look: Kiwi decides."""
    also = frozenset().union(*(passage_words(p.sentence) for p in joined))
    words = [passage_words(p.sentence) | also for p in stating]
    mine, others = surface_topic(body, frozenset().union(*words))
    mine -= _UNITS
    size = len(mine) + others
    shared = max(len(mine & w) for w in words)
    return shared >= MIN_TOPIC and shared >= (RELATED_SHARE + RELATED_MARGIN) * size


_CLAUSE_BREAK = re.compile(
    r"(?<!\d),|,(?!\d)|[;:–—]|\s+(?:but|while|whereas|although|though)\s+|(?<=지만)\s+|(?<=는데)\s+",
    re.IGNORECASE,
)
"""Where a sentence's clauses meet: commas (not a number's "50,000"), semicolons, dashes, "but", "-지만"."""


def clause_of(body: str, text: str) -> str | None:
    """The clause of `body` that states `text`, when the sentence has more than one and that clause has
    words enough of its own (`MIN_TOPIC`) to say what its number is about; None otherwise.

    Seen live (2026-12-03): "You can get up to 3 compensation coupons per day, but only for orders in the
    'delivery delayed' status." — the rule "at most 3 compensation coupons a day" shares half the words of
    the first clause, but not of the whole sentence, so a true answer was withheld for the clause the
    model added after it."""
    parts = [p for p in _CLAUSE_BREAK.split(body) if p and p.strip()]
    if len(parts) < 2:
        return None
    found = [p for p in parts if text in p]
    if len(found) != 1 or len(content_words(found[0]) - _UNITS) < MIN_TOPIC:
        return None
    return found[0]


def short_clause_inside(body: str, text: str, stating: Iterable[Passage]) -> bool:
    """Whether the clause stating `text` is too short to judge by shares (`MIN_TOPIC`) but every content
    word it has is in a sentence that states the number: "You can get up to 3 coupons a day, and …" for
    "at most 3 coupons … per calendar day"."""
    parts = [p for p in _CLAUSE_BREAK.split(body) if p and p.strip()]
    if len(parts) < 2:
        return False
    stated = [passage_words(p.sentence) for p in stating]
    for clause in (p for p in parts if text in p):
        words = content_words(clause) - _UNITS
        if words and len(words) < MIN_TOPIC and any(words <= there for there in stated):
            return True
    return False
