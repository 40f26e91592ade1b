"""The conversation's language (DESIGN.md §5): the language of the player's latest message, Hangul →
Korean, anything else → English. The one place that knows what counts as Hangul."""

from __future__ import annotations

import re
from typing import Literal

Locale = Literal["ko", "en"]

HANGUL_RANGE = "\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f"
"""Hangul syllables, conjoining jamo and compatibility jamo (ㅋㅋ, ㅠㅠ), as a regex character-class body."""

HANGUL = re.compile(f"[{HANGUL_RANGE}]")


def has_hangul(text: str | None) -> bool:
    return bool(text) and HANGUL.search(text) is not None


def detect_language(text: str | None) -> Locale:
    """`ko` when the text has any Hangul, else `en`."""
    return "ko" if has_hangul(text) else "en"


_LATIN_WORD = re.compile(r"[A-Za-z]+")
_ASIDE = re.compile(r"\[[^\]]*\]|\([^)]*\)|<[^<>]*>|`[^`]*`|\S*[\d=/]\S*")
"""Citations, parentheses, markup and code, and tokens with digits, `=` or `/` (ids, codes, amounts,
addresses): quoted labels, not the language a reply is written in ("Up to 3 a day [보상 정책 §2]",
"배송 지연 (delayed)", "`/coupon list` 명령")."""


def reply_language(text: str | None, *, min_letters: int = 20) -> Locale | None:
    """The language a reply is written in, by its letters outside citations, parentheses and ids:
    Korean when Hangul syllables are at least half as many as Latin letters (a syllable carries two to
    three letters' worth). None while the text has fewer than `min_letters` letters and fewer than four
    syllables: too early to tell (call again with more text, or with `min_letters=0` at the end)."""
    plain = _ASIDE.sub(" ", text or "")
    hangul = len(HANGUL.findall(plain))
    latin = sum(len(w) for w in _LATIN_WORD.findall(plain))
    if hangul + latin == 0:
        return None
    korean = hangul * 2 >= latin
    if hangul + latin < min_letters and not (korean and hangul >= 4):
        return None
    return "ko" if korean else "en"
