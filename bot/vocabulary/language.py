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
