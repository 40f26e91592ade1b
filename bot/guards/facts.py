"""The facts a sentence states, normalised so that equal facts compare equal whatever the wording:
amounts (10,000원 = 1만원 = 10000 KRW), counts (3장 = 세 장 = 3 coupons), durations (1일 = 24시간 = 1 day),
percentages, dates, times, order ids and order statuses (배송 지연 = delayed).

Pure functions of text: the fact check (`bot.guards.fact_check`) extracts the answer's facts and the
evidence's facts with the same code, so what backs a fact is decided on equal terms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from bot.vocabulary.sentences import split_sentences
from tools.money import find_krw_amounts

AMOUNT, COUNT, DURATION, PERCENT, DATE, TIME, ORDER, STATUS = (
    "amount",
    "count",
    "duration",
    "percent",
    "date",
    "time",
    "order",
    "status",
)
NUMERIC_KINDS = frozenset({AMOUNT, COUNT, DURATION, PERCENT})
"""Kinds a policy passage states: a contradicted one is answered with the passage's own sentence."""


@dataclass(frozen=True)
class Fact:
    """One fact a text states: its kind, its normalised value and the words that state it."""

    kind: str
    value: Any
    """amount: KRW int; count: int; duration: minutes; percent: float; date: "YYYY-MM-DD" or "MM-DD";
    time: (hour % 12, minute); order: "ORD001"; status: the status code ("delayed")."""
    text: str

    @property
    def key(self) -> tuple[str, Any]:
        return (self.kind, self.value)


# ---- what is not a fact ----------------------------------------------------------------------------

_CITATION = re.compile(r"\[[^\[\]\n]{1,80}\]")
"""`[보상 정책 §2 발급 한도]`: a citation label names a section, it states no fact."""
_COUPON_CODE = re.compile(r"(?<![A-Za-z0-9])ARCA-[A-Z0-9]{4}-[A-Z0-9]{4}(?![A-Za-z0-9])", re.IGNORECASE)
"""Coupon codes are the claim check's business."""
_LIST_MARK = re.compile(r"(?m)^\s*(?:\d{1,2}[.)]|[-*•])\s+")

# ---- dates and times -------------------------------------------------------------------------------

_MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for m in names
}
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_STARTS_AT_DIGIT = r"(?=\d)"
"""Before a pattern whose every match starts with a digit: the same matches, but the scan passes every other
position at one character test instead of the look-behind and the groups (a policy search's result, ~1,900
characters, is scanned by each pattern: 3–6× less for these)."""
_DATE_PATTERNS = (
    re.compile(_STARTS_AT_DIGIT + r"(?<!\d)(\d{4})\s*[-./]\s*(\d{1,2})\s*[-./]\s*(\d{1,2})(?!\d)"),
    re.compile(_STARTS_AT_DIGIT + r"(?<!\d)(\d{4})\s*년\s*(\d{1,2})\s*월\s*(\d{1,2})\s*일"),
    re.compile(_STARTS_AT_DIGIT + r"(?<!\d)()(\d{1,2})\s*월\s*(\d{1,2})\s*일"),
)
_YEAR_KO = re.compile(_STARTS_AT_DIGIT + r"(?<!\d)(\d{4})\s*년")
"""`2026년` alone: a year (value "2026"), not a duration of 2,026 years."""
_MONTH_FIRST = "[jfmasond]"
"""The letters month names start with. `(?={_MONTH_FIRST})` before the names changes no match (every name
starts with one) but lets the scan pass a word at one character test instead of trying every name
(half the pattern's cost); the same for the number words below (`_EN_NUM_FIRST`)."""
_DATE_EN = re.compile(
    rf"\b(?={_MONTH_FIRST})({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b"
    rf"|\b(?=\d)(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_NAMES})\.?(?:,?\s+(\d{{4}}))?\b",
    re.IGNORECASE,
)
_TIME_FIRST = r"(?=[오새밤\d])"
"""What a time starts with: its part of the day's first syllable (오전, 오후, 새벽, 밤) or its hour's digit."""
_TIME_PATTERNS = (
    re.compile(
        _TIME_FIRST
        + r"(?:(오전|오후|새벽|밤)\s*)?(?<!\d)(\d{1,2}):(\d{2})(?!\d)(?:\s*(am|pm|a\.m\.|p\.m\.))?",
        re.I,
    ),
    re.compile(
        _TIME_FIRST
        + r"(?:(오전|오후|새벽|밤)\s*)?(?<!\d)(\d{1,2})\s*시(?!간|즌|스템|작|행|점|기|도)(?:\s*(\d{1,2})\s*분)?()"
    ),
    re.compile(_STARTS_AT_DIGIT + r"()(?<!\d)(\d{1,2})()\s*(am|pm|a\.m\.|p\.m\.)", re.IGNORECASE),
)

# ---- numbers with units ------------------------------------------------------------------------------

_NUMBER = r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
_NATIVE_KO = {"한": 1, "하나": 1, "두": 2, "둘": 2, "세": 3, "셋": 3, "석": 3, "네": 4, "넷": 4, "다섯": 5,
              "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9, "열": 10}  # fmt: skip
_WORDS_EN = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
             "nine": 9, "ten": 10, "twice": 2, "once": 1, "a single": 1}  # fmt: skip
_AT_DIGIT = r"(?=\d)(?<![\w.,])"
"""Where a number starts: a digit not inside a word or a longer number. The digit is tested first (one
character) so the scan passes other positions without the look-behind: the same matches, ~40% less scan."""
_PERCENT = re.compile(_AT_DIGIT + _NUMBER + r"\s*(?:%|퍼센트|프로(?!그|모|필|젝)|percent\b)", re.IGNORECASE)

_KO_DURATION_UNITS = {"영업일": 1440, "일": 1440, "시간": 60, "분": 1, "주일": 10080, "주": 10080,
                      "개월": 43200, "달": 43200, "년": 525600}  # fmt: skip
_DURATION_KO = re.compile(
    _AT_DIGIT
    + _NUMBER
    + r"\s*(영업일|주일|개월|시간|일(?!반|부|정|단|시|괄|련|어|요일)|분(?!의|기|류|야|할|쟁|명|께|들)|주(?!문|소|의|요|말|로|간)|년)"
)
_DURATION_KO_WORDS = re.compile(
    r"(하루|이틀|사흘|나흘|닷새|엿새|이레|보름|한\s*달|두\s*달|세\s*달|일주일|한\s*시간|두\s*시간|세\s*시간)"
)
_KO_DURATION_WORDS = {"하루": 1440, "이틀": 2880, "사흘": 4320, "나흘": 5760, "닷새": 7200, "엿새": 8640,
                      "이레": 10080, "보름": 21600, "한달": 43200, "두달": 86400, "세달": 129600,
                      "일주일": 10080, "한시간": 60, "두시간": 120, "세시간": 180}  # fmt: skip
_EN_DURATION_UNITS = {"business day": 1440, "working day": 1440, "day": 1440, "hour": 60, "hr": 60,
                      "minute": 1, "min": 1, "week": 10080, "month": 43200, "year": 525600}  # fmt: skip
_EN_NUM = r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|a single)"
_EN_NUM_FIRST = r"[\dotfsena]"
"""The characters `_EN_NUM` (and "once", "twice") start with: a digit or o, t, f, s, e, n, a."""
_DURATION_EN = re.compile(
    rf"\b(?={_EN_NUM_FIRST})"
    + _EN_NUM
    + r"[\s-]*(business days?|working days?|days?|hours?|hrs?|minutes?|mins?|weeks?|months?|years?)\b",
    re.IGNORECASE,
)
_COUNT_KO = re.compile(
    _AT_DIGIT + _NUMBER + r"\s*(장|개(?!월)|회(?!원|사|의|차)|번(?!째|호)|건|명|상자|박스|차례|매)"
)
_COUNT_KO_NATIVE = re.compile(
    r"(?=[한하두둘세셋석네넷다여일아열])(?<![가-힣])(한|하나|두|둘|세|셋|석|네|넷|다섯|여섯|일곱|여덟|아홉|열)\s*(장|개(?!월)|번(?!째)|건|명|상자|박스|차례)"
)
_COUNT_EN = re.compile(
    # One look-ahead before both alternatives ("once" and "twice" start with letters of it too): each was
    # tried apart at every position, a third of the cost of a long text's extraction.
    rf"\b(?={_EN_NUM_FIRST})(?:"
    + _EN_NUM
    + r"\s+[\"“'‘]?(?:[a-z-]+\s+){0,2}(coupons?|vouchers?|boxes|box|chests?|times|items?|tickets?|attempts?|"
    r"rewards?|orders?|people|players?|requests?|codes?)(?![A-Za-z])|(once|twice)\b)",
    re.IGNORECASE,
)

_COUNT_EN_AFTER = re.compile(
    r"\b(?=[cvbitar])(?:coupons?|vouchers?|boxes|box|chests?|items?|tickets?|attempts?|rewards?|requests?|codes?)\b"
    r"[^.!?\d\n]{0,60}?\b(?:is|are|was|were|would\s+be|will\s+be)\s+"
    r"(?:up\s+to\s+|at\s+most\s+|only\s+|just\s+|a\s+maximum\s+of\s+|maximum\s+|max\s+)?"
    + _EN_NUM
    + r"(?![\d,.]*\d)(?!\s*(?:%|[A-Za-z]))",
    re.IGNORECASE,
)
"""A count stated after its noun: "the most reward boxes you can get after maintenance is 3." (seen live,
2026-12-02: the policy says 5)."""

# ---- orders and statuses -----------------------------------------------------------------------------

ORDER_ID = re.compile(r"(?=[A-Za-z])(?<![A-Za-z0-9])([A-Za-z]{2,5}\d{2,})(?![A-Za-z0-9])")
"""`ORD001`: letters then digits, as the store's order ids are written (any case). (The letter is tested
before the look-behind: the scan passes other positions at one character test.)"""

STATUS_WORDS: dict[str, re.Pattern[str]] = {
    "delayed": re.compile(r"배송\s*지연|배송이\s*(?:\S+\s+)?지연|지연\s*(?:중|상태|되|됐|돼)|\bdelayed\b", re.I),
    "shipping": re.compile(r"배송\s*중(?!단)|배송되고\s*있|배송\s*(?:이\s*)?진행|\bshipping\b|\bshipped\b|\bin\s+transit\b|\bon\s+(?:its|the)\s+way\b", re.I),
    "delivered": re.compile(r"배송\s*(?:이\s*)?완료|배달\s*완료|\bdelivered\b", re.I),
    "paid": re.compile(r"결제\s*(?:가\s*)?완료|\bpaid\b", re.I),
    "preparing": re.compile(r"(?:상품\s*)?준비\s*중|\bpreparing\b|\bbeing\s+prepared\b|\bin\s+preparation\b", re.I),
    "cancelled": re.compile(r"주문\s*취소|주문이\s*취소|취소\s*(?:된|되었|됐|완료|상태)|\bcancell?ed\b", re.I),
    "refunded": re.compile(r"환불\s*(?:이\s*)?완료|환불\s*(?:된|되었|됐|처리\s*(?:되|됐|완료))|\brefunded\b", re.I),
}  # fmt: skip
"""Each order status's code, Korean label and English words (DESIGN §5), as a sentence may state it."""


_LABEL_TAIL = re.compile(r"\s*(?:[가-힣A-Za-z]{1,10}\s*)?[:)]")


def _is_list_label(text: str, m: re.Match[str]) -> bool:
    """`N번` opening a line and followed by a colon ("01번 안내: …", "2번:") labels a list item; it
    states no count."""
    if m.group(m.lastindex or 0) != "번" or text[: m.start()].rsplit("\n", 1)[-1].strip():
        return False
    return _LABEL_TAIL.match(text, m.end()) is not None


_MAN_WON = re.compile(r"(?=만)(?<![\w.,])만\s*원")
_SPACES = re.compile(r"\s+")
# Precompiled: a pattern passed as a string is looked up in `re`'s cache on every call (≈1 µs each, tens
# of calls per sentence on the answer's path).

# ---- what each pattern cannot match without ----------------------------------------------------------
# A pattern scans the whole sentence at every position (5–30 µs each); a substring test is a fraction of a
# µs. Each tuple holds words one of which every match of its pattern contains, so skipping the pattern when
# none is in the text finds the same facts. Letters are tested in the sentence lower-cased (`fold_case`) for
# the patterns that ignore case. Keep them beside their patterns when either changes (tests/guards/
# test_facts.py checks each against its pattern).
_DATE_NEEDS = (("-", ".", "/"), ("년",), ("월",))
"""`_DATE_PATTERNS`, in order."""
_MONTH_STARTS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
"""`_DATE_EN`: every month name starts with one."""
_TIME_NEEDS = ((":",), ("시",), ("am", "pm", "a.m.", "p.m."))
"""`_TIME_PATTERNS`, in order (the last needs its am/pm: an "m" alone is in most English sentences)."""
_AMOUNT_NEEDS = ("원", "KRW", "krw", "won", "Won", "₩", "￦")
"""`tools.money.find_krw_amounts` and `_MAN_WON` (case as written there)."""
_PERCENT_NEEDS = ("%", "퍼센트", "프로", "percent")
_DURATION_KO_NEEDS = ("일", "월", "간", "분", "주", "년")
_DURATION_KO_WORDS_NEEDS = (
    "하루",
    "이틀",
    "사흘",
    "나흘",
    "닷새",
    "엿새",
    "이레",
    "보름",
    "달",
    "일주일",
    "시간",
)
_DURATION_EN_NEEDS = ("day", "hour", "hr", "min", "week", "month", "year")
_COUNT_KO_NEEDS = ("장", "개", "회", "번", "건", "명", "상자", "박스", "차례", "매")
"""`_COUNT_KO` and `_COUNT_KO_NATIVE`."""
_COUNT_EN_NEEDS = (
    "coupon", "voucher", "box", "chest", "time", "item", "ticket", "attempt", "reward", "order", "people",
    "player", "request", "code", "once", "twice",
)  # fmt: skip
"""`_COUNT_EN` and `_COUNT_EN_AFTER`."""
_STATUS_NEEDS = {
    "delayed": ("지연", "delayed"),
    "shipping": ("배송", "shipp", "transit", "way"),
    "delivered": ("배송", "배달", "delivered"),
    "paid": ("결제", "paid"),
    "preparing": ("준비", "prepar"),
    "cancelled": ("취소", "cancel"),
    "refunded": ("환불", "refunded"),
}
"""`STATUS_WORDS`, by status."""
_CASE_FOLDS = str.maketrans({"ſ": "s", "ı": "i", "İ": "i"})
"""Every letter `re.IGNORECASE` takes for an ASCII letter that `str.lower` does not turn into it ("ſ",
"ı" stay; "İ" becomes two characters, "i̇"), folded first (the guard tests check every code point)."""


_FOLDED_LETTER = re.compile("[" + "".join(re.escape(chr(c)) for c in _CASE_FOLDS) + "]")
"""Any letter of `_CASE_FOLDS`: a text without one is the same translated (`str.translate` with a table
costs ~7 µs a long non-ASCII sentence, and fold_case runs several times a sentence; the scan ~0.3 µs)."""


def fold_case(text: str) -> str:
    """`text` lower-cased the way a case-ignoring pattern compares ASCII letters (a pattern's match
    looked up in a table of lower-case words is looked up folded too: "ſeptember" and "FRİDAY" matched),
    one character for one."""
    if text.isascii() or _FOLDED_LETTER.search(text) is None:
        return text.lower()
    return text.translate(_CASE_FOLDS).lower()


def _int(text: str) -> int | float:
    raw = text.replace(",", "")
    value = float(raw)
    return int(value) if value.is_integer() else value


def _en_number(word: str) -> int | float:
    word = fold_case(word)
    return _WORDS_EN[word] if word in _WORDS_EN else _int(word)


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _dates(text: str, out: list[Fact], lower: str) -> str:
    for pattern, needs in zip(_DATE_PATTERNS, _DATE_NEEDS, strict=True):
        if not any(c in text for c in needs):
            continue
        for m in pattern.finditer(text):
            year, month, day = m.group(1), int(m.group(2)), int(m.group(3))
            if not (1 <= month <= 12 and 1 <= day <= 31):
                continue
            value = f"{int(year):04d}-{month:02d}-{day:02d}" if year else f"{month:02d}-{day:02d}"
            out.append(Fact(DATE, value, m.group(0)))
            text = _blank(text, m.start(), m.end())
    if "년" in text:
        for m in _YEAR_KO.finditer(text):
            out.append(Fact(DATE, m.group(1), m.group(0)))
            text = _blank(text, m.start(), m.end())
    if not any(month in lower for month in _MONTH_STARTS):
        return text
    for m in _DATE_EN.finditer(text):
        if m.group(1):
            month, day, year = _MONTHS[fold_case(m.group(1))], int(m.group(2)), m.group(3)
        else:
            month, day, year = _MONTHS[fold_case(m.group(5))], int(m.group(4)), m.group(6)
        if m.group(1) and fold_case(m.group(1)) == "may" and not year and day > 31:
            continue
        if 1 <= day <= 31:
            value = f"{int(year):04d}-{month:02d}-{day:02d}" if year else f"{month:02d}-{day:02d}"
            out.append(Fact(DATE, value, m.group(0)))
            text = _blank(text, m.start(), m.end())
    return text


def _times(text: str, out: list[Fact], lower: str) -> str:
    for pattern, needs in zip(_TIME_PATTERNS, _TIME_NEEDS, strict=True):
        if not any(c in lower for c in needs):
            continue
        for m in pattern.finditer(text):
            hour = int(m.group(2))
            minute = int(m.group(3)) if m.group(3) else 0
            if hour > 24 or minute > 59:
                continue
            # a.m./p.m. is not compared: "15:00" and "오후 3시" and "3시" are one time.
            out.append(Fact(TIME, (hour % 12, minute), m.group(0)))
            text = _blank(text, m.start(), m.end())
    return text


def _amounts(text: str, out: list[Fact]) -> str:
    if not any(w in text for w in _AMOUNT_NEEDS):
        return text
    found = find_krw_amounts(text)
    for a in found:
        out.append(Fact(AMOUNT, a.value, text[a.start : a.end]))
    for a in reversed(found):
        text = _blank(text, a.start, a.end)
    if "만" not in text:
        return text
    for m in _MAN_WON.finditer(text):
        out.append(Fact(AMOUNT, 10_000, m.group(0)))
        text = _blank(text, m.start(), m.end())
    return text


def _has(text: str, words: tuple[str, ...]) -> bool:
    """Whether any of `words` is in `text`: one scan of a compiled alternation (a Python loop of
    substring tests cost ~2 µs on a sentence with none of the number words, the common case)."""
    pattern = _WORDS_PATTERNS.get(words)
    if pattern is None:
        pattern = _WORDS_PATTERNS[words] = re.compile("|".join(map(re.escape, words)))
    return pattern.search(text) is not None


_WORDS_PATTERNS: dict[tuple[str, ...], re.Pattern[str]] = {}
"""`_has`'s patterns, one per word tuple (every tuple it is asked about is a module constant)."""


def _units(text: str, out: list[Fact], lower: str) -> str:
    # Each pattern runs only when a word it cannot match without is in the text (`_NEEDS`): most
    # sentences state one or two kinds, and each pattern scans the whole sentence.
    if _has(lower, _PERCENT_NEEDS):
        for m in _PERCENT.finditer(text):
            out.append(Fact(PERCENT, float(_int(m.group(1))), m.group(0)))
            text = _blank(text, m.start(), m.end())
    if _has(text, _DURATION_KO_NEEDS):
        for m in _DURATION_KO.finditer(text):
            out.append(Fact(DURATION, _int(m.group(1)) * _KO_DURATION_UNITS[m.group(2)], m.group(0)))
            text = _blank(text, m.start(), m.end())
    if _has(text, _DURATION_KO_WORDS_NEEDS):
        for m in _DURATION_KO_WORDS.finditer(text):
            out.append(Fact(DURATION, _KO_DURATION_WORDS[_SPACES.sub("", m.group(1))], m.group(0)))
            text = _blank(text, m.start(), m.end())
    if _has(lower, _DURATION_EN_NEEDS):
        for m in _DURATION_EN.finditer(text):
            unit = fold_case(m.group(2)).rstrip("s")
            out.append(Fact(DURATION, _en_number(m.group(1)) * _EN_DURATION_UNITS[unit], m.group(0)))
            text = _blank(text, m.start(), m.end())
    if _has(text, _COUNT_KO_NEEDS):
        for m in _COUNT_KO.finditer(text):
            if _is_list_label(text, m):
                continue  # "01번 안내: …" numbers a line of a list; it states no count
            out.append(Fact(COUNT, _int(m.group(1)), m.group(0)))
            text = _blank(text, m.start(), m.end())
        for m in _COUNT_KO_NATIVE.finditer(text):
            out.append(Fact(COUNT, _NATIVE_KO[m.group(1)], m.group(0)))
            text = _blank(text, m.start(), m.end())
    if not _has(lower, _COUNT_EN_NEEDS):
        return text
    for m in _COUNT_EN.finditer(text):
        word = m.group(1) or m.group(3)
        value = _en_number(word)
        if value == 1 and _RATE_AFTER.match(text, m.end()):
            continue  # "one box per started hour": a rate's unit, not a figure (the figure is the cap)
        out.append(Fact(COUNT, value, m.group(0)))
        text = _blank(text, m.start(), m.end())
    for m in _COUNT_EN_AFTER.finditer(text):
        out.append(Fact(COUNT, _en_number(m.group(1)), m.group(0)))
        text = _blank(text, m.start(), m.end())
    return text


_RATE_AFTER = re.compile(
    r"[\"”’']?\s*(?:per|for\s+each|for\s+every|each|every|a\s+(?:day|hour|week))\b", re.I
)
"""What follows a rate's unit ("one box per started hour", "one coupon a day")."""

_COUNTED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("box", re.compile(r"상자|박스|\bbox(?:es)?\b|\bchests?\b", re.IGNORECASE)),
    ("coupon", re.compile(r"장|매|\bcoupons?\b|\bvouchers?\b|\bcodes?\b", re.IGNORECASE)),
    ("order", re.compile(r"건|\borders?\b|\brequests?\b", re.IGNORECASE)),
    ("person", re.compile(r"명|\bpeople\b|\bplayers?\b", re.IGNORECASE)),
    ("times", re.compile(r"회|번|차례|\btimes\b|\battempts?\b|\bonce\b|\btwice\b", re.IGNORECASE)),
)


@lru_cache(maxsize=4096)  # asked for every passage a count is compared with
def counted(fact: Fact) -> str | None:
    """What a count counts, as a class ("box", "coupon", "order", "person", "times"); None for a generic
    counter ("3개", "3 items") that may count anything. "1 reward box" is not backed by "1 order"."""
    if fact.kind != COUNT:
        return None
    for name, pattern in _COUNTED:
        if pattern.search(fact.text):
            return name
    return None


def same_counted(a: Fact, b: Fact) -> bool:
    """Whether two facts may state the same count: not counts, or either counter generic, or the same
    thing counted."""
    one, other = counted(a), counted(b)
    return one is None or other is None or one == other


_ORDER_WORD = re.compile(r"주문|\border\b", re.IGNORECASE)


def order_ids(text: str) -> list[str]:
    """The order ids `text` names, upper-cased, in order, without repeats."""
    if "arca-" in fold_case(text):  # `_COUPON_CODE` needs it (case ignored); a scan otherwise
        text = _COUPON_CODE.sub(" ", text)
    return list(dict.fromkeys(o.upper() for o in ORDER_ID.findall(text)))


def statuses(text: str) -> list[str]:
    """The order status codes `text` states (by code, Korean label or English word)."""
    lower = fold_case(text)
    return [
        code
        for code, pattern in STATUS_WORDS.items()
        if _has(lower, _STATUS_NEEDS[code]) and pattern.search(text)
    ]


_MAYBE_NUMBER = re.compile(
    r"\d|만\s*원|하루|이틀|사흘|나흘|닷새|엿새|이레|보름|달|일주일|시간|once|twice|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|single|[한두세네석열]\s*(?:장|개|번|건|명|상자|박스|차례)|하나|둘|셋|넷|다섯|여섯|일곱|여덟|아홉",
    re.IGNORECASE,
)
"""Cheap test first: a sentence without a digit or a number word has no number to extract."""
_DIGIT = re.compile(r"\d")
"""Asked before `_MAYBE_NUMBER`: most sentences with a number have a digit, found at once."""
_NUMBER_WORD_NEEDS = (
    "만", "하루", "이틀", "사흘", "나흘", "닷새", "엿새", "이레", "보름", "달", "일주일", "시간", "once", "twice",
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "single", "장", "개", "번",
    "건", "명", "상자", "박스", "차례", "하나", "둘", "셋", "넷", "다섯", "여섯", "일곱", "여덟", "아홉",
)  # fmt: skip
"""`_MAYBE_NUMBER` without a digit (lower-cased): a sentence with none of these states no number, and
most sentences of an answer state none (the pattern's alternatives cost ~10 µs a sentence)."""


# `_has`'s patterns compiled at import, not on a text's first need of each: compiling one costs ~0.2 ms
# and its garbage can set off a full collection of a grown heap (seen in the lone conversation's evidence,
# 2026-12-07: 1–30 ms for a policy sentence in English, the first such in the process).
for _needs in (
    _PERCENT_NEEDS, _DURATION_KO_NEEDS, _DURATION_KO_WORDS_NEEDS, _DURATION_EN_NEEDS, _COUNT_KO_NEEDS,
    _COUNT_EN_NEEDS, _NUMBER_WORD_NEEDS, *_STATUS_NEEDS.values(),
):  # fmt: skip
    _has("", _needs)

_KO_FACT_WORDS = (*(w for w in _NUMBER_WORD_NEEDS if not w.isascii()), "주문")
_EN_FACT_WORDS = (*(w for w in _NUMBER_WORD_NEEDS if w.isascii()), "order")
"""`states_no_fact`'s words: the number words and the order word (`_ORDER_WORD`) of `_extract`, split by
whether case folding can touch them."""
_LATIN_LETTER = "[A-Za-z\u0130\u0131\u017f\u212a]"
"""Every character whose `fold_case` holds an ASCII letter (İ, ı, ſ and the Kelvin sign besides A–Z;
tests/guards/test_prescan.py checks every code point): a text without one has no English word."""
# Bound once: the test runs on every sentence of every answer, and a method looked up per call and a
# pattern found through `_has`'s table were a fifth of its cost.
_digit_in = re.compile(r"\d").search
_ko_fact_word_in = re.compile("|".join(map(re.escape, _KO_FACT_WORDS))).search
_latin_letter_in = re.compile(_LATIN_LETTER).search
_en_fact_word_in = re.compile("|".join(map(re.escape, _EN_FACT_WORDS))).search


def states_no_fact(text: str) -> bool:
    """Whether `text` surely states no fact: no digit, no number word and no order word, the three things
    `_extract` finds a fact by. Its blanking (citations, coupon codes, list marks) only turns characters
    into spaces and its folding leaves Korean alone, so a word it finds is in `text` as written. ~0.5 µs
    for a short sentence where the extraction costs ~2 µs: most of an answer's sentences (its first,
    "확인했습니다.", on the way to the first released text) state nothing."""
    if _digit_in(text) is not None or _ko_fact_word_in(text) is not None:
        return False
    return _latin_letter_in(text) is None or _en_fact_word_in(fold_case(text)) is None


_CUT_BEFORE = re.compile(r"(?<![\d\s])(?<![ap]\.m)[.!?]\s*\Z", re.IGNORECASE)
"""How a piece before a cut ends: one terminal mark after a character that is neither a digit nor a space
(a list mark, "3.", is blanked with its "."), and not the end of "a.m."/"p.m." (a time's, blanked too)."""


def calendar_pieces(text: str) -> list[str]:
    """`text` cut into pieces whose dates, times and durations (`extract_facts`, those kinds only) are,
    together, the whole text's, in the same number: a long text (a policy search's result, ~2,000
    characters) is read piece by piece, each piece cached, most of them sentences the evidence has read
    already (`bot.guards.evidence._trusted_facts`) or that an earlier result had too.

    A cut is made only between sentences (`split_sentences`), never inside a citation label, where the
    sentence before ends with one ".", "!" or "?" after a character that is neither a digit nor a space
    (a list mark's "3." is blanked) and not with "a.m."/"p.m." (blanked with its time), and the one after
    starts, past its spaces and what the extraction blanks in both before the list marks (citation
    labels, coupon codes) and a list mark at a line's start, with neither a digit nor a list mark. No
    match of those kinds, nor of the amounts, percentages and order ids blanked before them, crosses such
    a cut: "!" and "?" are in no pattern, and a "." inside a match is followed, past spaces, by a digit
    (a decimal, "2026. 3. 1", "Jan. 5, 2026"), or by a letter with no space between ("a.m."), or ends it.
    The blanking is the same piece by piece: a label or a code lies inside one piece, and a list mark
    starts a piece only where it starts a line. The look-arounds at a cut see a space or the string's
    start, which they read alike. The cheap tests before each pattern and before the whole extraction
    only skip what could not match the piece. tests/guards/test_prescan.py compares both over the
    policies, search results built from them, the sets, the transcripts, texts written to cross the cuts
    (three rules were found missing that way) and random texts; 1,000,000 more random texts were
    compared once, with no difference.
    sets, the transcripts and texts written to cross the cuts."""
    done, rest = split_sentences(text)
    parts = [*done, rest] if rest else done
    if len(parts) < 2:
        return [text]
    cited = {m.start(): m.end() for m in _CITATION.finditer(text)} if "[" in text else {}
    if "arca-" in fold_case(text):  # coupon codes are blanked too before the list marks
        cited.update((m.start(), m.end()) for m in _COUPON_CODE.finditer(text))
    pieces = [parts[0]]
    at = len(parts[0])
    after = _CUT_BEFORE.search(parts[0]) is not None
    """Whether the text so far ends where a cut may follow."""
    for part in parts[1:]:
        line_start = text[at - 1] == "\n"
        cut = after and _clear_after(text, at, part, line_start, cited)
        if cut:
            pieces.append(part)
        else:
            pieces[-1] += part
        at += len(part)
        mark = _LIST_MARK.match(part) if cut and line_start else None
        # "2. " alone (the splitter ends a sentence after its "."): blanked in both, it stands for spaces,
        # so the text after it may be cut as the text before it could.
        after = (mark is not None and mark.end() == len(part)) or _CUT_BEFORE.search(pieces[-1]) is not None
    return pieces


def _clear_after(text: str, at: int, part: str, line_start: bool, cited: dict[int, int]) -> bool:
    """Whether `text` may be cut before `part` (at `at`), the text before allowing it: not inside a
    citation label, a list mark only at a line's start, and what comes first past the spaces, the list
    mark, the labels and coupon codes (`cited`: all blanked in both) is neither a digit nor a list mark's
    "-", "*" or "•" (labels and codes are blanked before the list marks, so a mark past them would be
    blanked from the line's start in the whole text, and what follows it brought next to the cut)."""
    if any(a < at < b for a, b in cited.items()):
        return False
    pos = at
    mark = _LIST_MARK.match(part)
    if mark is not None:
        if not line_start:
            return False  # a list mark inside a line: blanked in the piece, not in the whole text
        pos += mark.end()
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos not in cited:
            break
        pos = cited[pos]
    return pos < len(text) and not text[pos].isdigit() and text[pos] not in "-*•"


def extract_facts(text: str) -> list[Fact]:
    """Every fact `text` states. A status counts only in a sentence that names an order (or says
    "주문"/"order"): "배송이 지연되면 …" about the rules states no order's status."""
    if states_no_fact(text):
        return []  # before the cache: a new sentence costs the cache's miss and entry too
    return list(_extract(text))


@lru_cache(maxsize=8192)
def _extract(text: str) -> tuple[Fact, ...]:
    # Cached: the rules, the catalogue, policy passages and a thread's earlier results are the same
    # texts run after run; extracting them again each time put tens of milliseconds before the first byte.
    if "[" in text:
        text = _CITATION.sub(" ", text)
    lower = fold_case(text)
    if "arca-" in lower:
        text = _COUPON_CODE.sub(" ", text)
    text = _LIST_MARK.sub(" ", text)
    out: list[Fact] = []
    if not (_DIGIT.search(text) or (_has(lower, _NUMBER_WORD_NEEDS) and _MAYBE_NUMBER.search(text))):
        # no digit and no number word: only an order's status may be stated
        if _ORDER_WORD.search(text):
            out.extend(Fact(STATUS, code, code) for code in statuses(text))
        return tuple(out)
    text = _dates(text, out, lower)
    text = _times(text, out, lower)
    text = _amounts(text, out)
    orders = order_ids(text)
    for order in orders:
        out.append(Fact(ORDER, order, order))
    rest = ORDER_ID.sub(" ", text) if orders else text
    _units(rest, out, fold_case(rest))
    if (out and any(f.kind == ORDER for f in out)) or _ORDER_WORD.search(text):
        for code in statuses(text):
            out.append(Fact(STATUS, code, code))
    return out


__all__ = [
    "AMOUNT",
    "COUNT",
    "DATE",
    "DURATION",
    "NUMERIC_KINDS",
    "ORDER",
    "ORDER_ID",
    "PERCENT",
    "STATUS",
    "STATUS_WORDS",
    "TIME",
    "Fact",
    "calendar_pieces",
    "extract_facts",
    "fold_case",
    "order_ids",
    "states_no_fact",
    "statuses",
]
