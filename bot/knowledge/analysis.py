"""Text → search terms for the lexical index: Korean morphemes (kiwipiepy), stemmed English, numbers.

Korean: nouns, verb and adjective stems and foreign words, as kiwipiepy's model (shipped in the
`kiwipiepy-model` wheel, loaded once per process) splits them, so "쿠폰한도가얼마예요" and "쿠폰 한도"
share their terms. Numbers keep their unit and are written as digits, so "2만원", "이만 원" and "20,000원"
are the same term `20000원`. English words are lower-cased, stop words dropped and Snowball-stemmed
("suspended"/"suspension" → "suspens").
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache
from typing import Any

ANALYZER_VERSION = 3
"""Part of the index format: terms stored in an index come from this analyzer."""

MAX_QUERY_CHARS = 2000
"""A query is cut to this first: no policy question needs more (the embedder caps it further)."""

MAX_ANALYZED_CHARS = 4000
"""A query is analysed up to this many characters; policy text is analysed whole."""

MAX_KEYWORD_QUERY_CHARS = 80
"""A longer query is not a keyword query (`keyword_head` does not tokenize it a second time)."""

_CONTENT_TAGS = frozenset({"NNG", "NNP", "XR", "SH", "VV", "VA", "VV-R", "VA-R", "VV-I", "VA-I"})
_NUMBER_TAGS = frozenset({"SN", "NR"})
_KEYWORD_TAGS = frozenset(
    {"NNG", "NNP", "NNB", "NR", "SN", "SL", "SH", "XR", "XSN", "SF", "SP", "SS", "SO", "SW"}
)
"""Tags of a keyword query: nouns, numbers, foreign words and punctuation, no predicate or ending."""
_UNITS = {
    "원": "원",
    "일": "일",
    "개": "개",
    "장": "장",
    "번": "회",
    "회": "회",
    "시간": "시간",
    "분": "분",
    "주": "주",
    "달": "개월",
    "개월": "개월",
    "년": "년",
    "세": "세",
    "살": "세",
    "명": "명",
    "대": "대",
    "자": "자",
    "골드": "골드",
    "프로": "%",
    "퍼센트": "%",
    "%": "%",
    "시": "시",
    "단계": "단계",
    "영업일": "영업일",
}
_NATIVE_NUMBERS = {
    "한": 1,
    "하나": 1,
    "두": 2,
    "둘": 2,
    "세": 3,
    "셋": 3,
    "석": 3,
    "네": 4,
    "넷": 4,
    "다섯": 5,
    "여섯": 6,
    "일곱": 7,
    "여덟": 8,
    "아홉": 9,
    "열": 10,
    "스무": 20,
    "스물": 20,
    "서른": 30,
    "마흔": 40,
    "쉰": 50,
}
_SINO_DIGITS = {"일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9}
_SMALL_UNITS = {"십": 10, "백": 100, "천": 1000}
_BIG_UNITS = {"만": 10_000, "억": 100_000_000}
_NUMBER_PIECE = re.compile(r"\d+(?:\.\d+)?|[일이삼사오육칠팔구십백천만억]")
_ENGLISH_STOPWORDS = frozenset(
    "a an the is are was were be been am do does did i im i'm me my you your u ur we our it its of to in "
    "on at for with and or if can could would should will what whats how when which who why there this "
    "that these those from by as any get got have has had not no so about just like some please pls "
    "there's it's don't dont can't cant".split()
)
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+")

_lock = threading.Lock()
_kiwi: Any = None
_stemmer: Any = None
_given: dict[str, tuple[tuple[str, ...], str | None]] = {}
"""Queries whose terms and head noun were worked out elsewhere (`adopt_query_terms`)."""


def _analyzers() -> tuple[Any, Any]:
    """The process's one Kiwi and one English stemmer. Without the multi-word dictionary Kiwi takes
    ~320 MB instead of ~500 MB, and the tuning set's recall is the same to the third decimal. Without
    the typo dictionary (common misspellings, playful sentence endings) it loads ~0.15 s faster and
    gives the same terms and head nouns for every shipped policy, policy question and retrieval-set
    query (4,807 texts, 2026-12-07)."""
    global _kiwi, _stemmer
    with _lock:
        if _kiwi is None:
            import Stemmer
            from kiwipiepy import Kiwi

            _stemmer = Stemmer.Stemmer("english")
            _kiwi = Kiwi(num_workers=-1, load_multi_dict=False, load_typo_dict=False)
        return _kiwi, _stemmer


def korean_number(text: str) -> int | None:
    """`"2만"`, `"이만오천"`, `"구천구백"`, `"20,000"` → an integer; None when it is not a number."""
    text = text.replace(",", "")
    if text in _NATIVE_NUMBERS:
        return _NATIVE_NUMBERS[text]
    pieces = _NUMBER_PIECE.findall(text)
    if not pieces or "".join(pieces) != text:
        return None
    total = section = 0
    current: float | None = None
    for piece in pieces:
        if piece[0].isdigit():
            current = float(piece)
        elif piece in _SINO_DIGITS:
            current = _SINO_DIGITS[piece]
        elif piece in _SMALL_UNITS:
            section += (current if current is not None else 1) * _SMALL_UNITS[piece]
            current = None
        else:
            total += ((section + (current or 0)) or 1) * _BIG_UNITS[piece]
            section, current = 0, None
    value = total + section + (current or 0)
    return int(value) if float(value).is_integer() else None


def _english_terms(text: str, stemmer: Any) -> list[str]:
    words = [w for w in _WORD.findall(text) if w not in _ENGLISH_STOPWORDS and not w.isdigit()]
    return stemmer.stemWords(words) if words else []


def _is_number_token(token: Any) -> bool:
    return token.tag in _NUMBER_TAGS or (token.tag == "MM" and token.form in _NATIVE_NUMBERS)


def _adjacent(left: Any, right: Any) -> bool:
    """`이만 원`, `2만`: number pieces written together or one space apart form one number."""
    return right.start <= left.start + left.len + 1


def analyze(text: str) -> list[str]:
    """The search terms of `text`, in order (repeats kept: BM25 counts them)."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    if not text.strip():
        return []
    kiwi, stemmer = _analyzers()
    tokens = kiwi.tokenize(text)
    terms: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if _is_number_token(token):
            j = i + 1
            while j < len(tokens) and _is_number_token(tokens[j]) and _adjacent(tokens[j - 1], tokens[j]):
                j += 1
            value = korean_number("".join(t.form for t in tokens[i:j]))
            unit = _UNITS.get(tokens[j].form) if j < len(tokens) else None
            if value is not None:
                terms.append(f"{value}{unit or ''}")
                i = j + (1 if unit else 0)
                continue
            i = j
            continue
        if token.tag in _CONTENT_TAGS:
            terms.append(token.form)
        elif token.tag == "SL":
            terms.extend(_english_terms(token.form, stemmer))
        i += 1
    return terms


def search_text(query: str) -> str:
    """What a search looks at of a query: stripped and cut to `MAX_QUERY_CHARS`."""
    return (query or "").strip()[:MAX_QUERY_CHARS]


def adopt_query_terms(query: str, terms: tuple[str, ...], head: str | None) -> None:
    """Take `analyze_query(query)` and `keyword_head(query)` as worked out by another process running
    this module (`bot.knowledge.query_terms`), so this one need not load Kiwi for that query."""
    with _lock:
        _given[query] = (tuple(terms), head)


@lru_cache(maxsize=1024)
def analyze_query(query: str) -> tuple[str, ...]:
    """`analyze` for a search query, capped at `MAX_ANALYZED_CHARS`; cached (players repeat questions)."""
    given = _given.get(query)
    if given is not None:
        return given[0]
    return tuple(analyze(query[:MAX_ANALYZED_CHARS]))


@lru_cache(maxsize=1024)
def keyword_head(query: str) -> str | None:
    """The head noun of a Korean keyword query, or None for anything else.

    Korean noun phrases are head-final: in "배송 지연 보상 쿠폰 한도" (delivery-delay compensation coupon
    *limit*) the nouns before the last one only narrow it down, so the last noun is what is asked
    about. Only a bare string of nouns (no verb, adjective or ending, e.g. not "쿠폰 한도가 얼마예요?")
    that ends in a Korean noun has a head; a sentence's last noun is often not its topic.
    """
    if len(query) > MAX_KEYWORD_QUERY_CHARS:
        return None
    given = _given.get(query)
    if given is not None:
        return given[1]
    text = unicodedata.normalize("NFKC", query).lower()
    kiwi, _ = _analyzers()
    tokens = [t for t in kiwi.tokenize(text) if t.tag not in ("SF", "SP", "SS", "SO", "SW")]
    if len(tokens) < 2 or any(t.tag not in _KEYWORD_TAGS for t in tokens):
        return None
    last = tokens[-1]
    return last.form if last.tag in ("NNG", "NNP") else None


@lru_cache(maxsize=1024)
def honorific_modifier(word: str) -> str | None:
    """A Korean verb in its modifier form said with the honorific 시 ("작성한" → "작성하신", "보낸" →
    "보내신"); the word itself when it already has it; None for anything that is not one verb's modifier
    form ("부담합니다", "주문"). For the output guard's Korean second person (`bot.guards.voice`)."""
    kiwi, _ = _analyzers()
    tokens = [(t.form, t.tag) for t in kiwi.tokenize(word)]
    if (
        len(tokens) < 2
        or tokens[-1][1] != "ETM"
        or not any(tag.startswith(("VV", "XSV", "VX")) for _, tag in tokens)
    ):
        return None
    if any(tag == "EP" and form in ("시", "으시") for form, tag in tokens):
        return word
    return str(kiwi.join([*tokens[:-1], ("시", "EP"), tokens[-1]]))


def serve_query_terms() -> None:
    """The second process of `bot.knowledge.query_terms`: the query in `sys.argv[2]`; prints it back
    with its terms and head noun as one line of ASCII JSON."""
    import json
    import sys

    query = sys.argv[2]
    answer = {"query": query, "terms": list(analyze_query(query)), "head": keyword_head(query)}
    sys.stdout.write(json.dumps(answer) + "\n")
