"""Korean particles after a word that is only known at run time ("주문 ORD003을", "답변 'sorry'를"):
the right form of 을/를, 이/가, 은/는, 과/와, (으)로 instead of "을(를)".

Hand-written: the rule is one line of Unicode arithmetic for a Hangul syllable, and the project's words
end in digits and Latin letters too (ids, names), which the small Hangul libraries on PyPI read
differently from one another; the table below is the reading staff expect ("#3을", "P100을", "ORD001을").
"""

from __future__ import annotations

import re

PAIRS = {"을/를": ("을", "를"), "이/가": ("이", "가"), "은/는": ("은", "는"), "과/와": ("과", "와")}
"""(after a final consonant, after a vowel) for each particle."""

_DIGIT_HAS_FINAL = {
    "0": True,
    "1": True,
    "2": False,
    "3": True,
    "4": False,
    "5": False,
    "6": True,
    "7": True,
    "8": True,
    "9": False,
}
"""영 일 이 삼 사 오 육 칠 팔 구: which digits end in a consonant when read in Korean."""
_DIGIT_FINAL_L = {"1", "7", "8"}
"""일 칠 팔 end in ㄹ, after which (으)로 is 로."""
_LATIN_HAS_FINAL = set("lmnrLMNR")
"""Letters read with a final consonant ("엘, 엠, 엔, 알"); the others end in a vowel ("에이, 비, …")."""
_LAST = re.compile(r"[0-9A-Za-z\uac00-\ud7a3]")


_TRAILING_ASIDE = re.compile(r"\s*\([^()]*\)\s*$")
"""A parenthetical at the end: the particle follows the word before it ("쿠폰 A-2000 (만료 …)이")."""


def _final(word: str) -> tuple[bool, bool]:
    """(ends in a consonant, that consonant is ㄹ) for the last readable character of `word`, a
    parenthetical at its end set aside."""
    bare = _TRAILING_ASIDE.sub("", word)
    for ch in reversed(bare or word):
        if not _LAST.match(ch):
            continue
        if "\uac00" <= ch <= "\ud7a3":
            final = (ord(ch) - 0xAC00) % 28
            return final != 0, final == 8
        if ch.isdigit():
            return _DIGIT_HAS_FINAL[ch], ch in _DIGIT_FINAL_L
        return ch in _LATIN_HAS_FINAL, ch in "lLrR"
    return False, False


def particle(word: str, pair: str) -> str:
    """`word` with the particle of `pair` that fits it: particle("ORD003", "을/를") → "ORD003을",
    particle("'sorry'", "을/를") → "'sorry'를", particle("#3", "으로/로") → "#3으로"."""
    has_final, is_l = _final(word)
    if pair == "으로/로":
        return word + ("으로" if has_final and not is_l else "로")
    after_consonant, after_vowel = PAIRS[pair]
    return word + (after_consonant if has_final else after_vowel)


_PAIR_OF = {form: pair for pair, forms in {**PAIRS, "으로/로": ("으로", "로")}.items() for form in forms}
"""Each written form ("를", "로") → its pair ("을/를", "으로/로")."""


def fitting_form(word: str, written: str) -> str:
    """The form of the particle a text wrote (either form: 을 or 를, 로 or 으로) that fits `word`, when
    the word before it was swapped at run time: fitting_form("주문 조회", "를") → "를"; not a particle
    of `PAIRS`: `written` unchanged."""
    pair = _PAIR_OF.get(written)
    return written if pair is None else particle(word, pair)[len(word) :]
