"""Won amounts in text: formatting for messages (`20,000원` / `20,000 KRW`) and finding amounts in answers."""

from __future__ import annotations

import re
from dataclasses import dataclass


def format_krw(amount: int, locale: str = "ko") -> str:
    """`20000` → `20,000원` (Korean) or `20,000 KRW` (any other locale)."""
    text = f"{int(amount):,}"
    return f"{text}원" if locale == "ko" else f"{text} KRW"


@dataclass(frozen=True)
class AmountMention:
    """One won amount written in a text, with where it stands."""

    value: int
    start: int
    end: int


# Digits may carry thousands separators; the look-arounds keep us from starting inside a longer token
# (Korean syllables count as word characters, so `\b` cannot be used next to them).
# The digit is tested first: the scan passes other positions at one character test instead of the
# look-behind (the same matches, ~30% less scan).
_NUM = r"(?=\d)(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)"
_SUFFIXED = re.compile(_NUM + r"\s*(?:원|KRW\b|krw\b|won\b|Won\b)")
_PREFIXED = re.compile(r"(?:₩|￦|\bKRW\s?)\s*(\d{1,3}(?:,\d{3})+|\d+)(?![\d,])")
# Korean myriad units: 3만원, 2만 원, 1만5천원, 5천원, 1만 5,000원.
_MYRIAD = re.compile(
    r"(?=\d)(?<![\w.,])(?:(\d+)\s*만\s*(?:(\d+)\s*천\s*|(\d{1,3}(?:,\d{3})*)\s*)?원"
    r"|(\d+)\s*천\s*원)"
)
_DIGIT = re.compile(r"\d")


def find_krw_amounts(text: str) -> list[AmountMention]:
    """Every won amount in `text` (`30,000원`, `30000 KRW`, `₩30,000`, `3만원`, `5천원`), in order."""
    found: dict[tuple[int, int], AmountMention] = {}
    taken: list[tuple[int, int]] = []
    # Cheap tests first: every pattern needs a digit and its currency's word or sign (as written: the
    # patterns are case-sensitive), and each one scans every position (~10 µs a long sentence each).
    if not _DIGIT.search(text):
        return []
    won = "원" in text
    suffixed = won or any(w in text for w in ("KRW", "krw", "won", "Won"))
    prefixed = "₩" in text or "￦" in text or "KRW" in text
    for m in _MYRIAD.finditer(text) if won else ():
        if m.group(1) is not None:
            value = int(m.group(1)) * 10_000
            if m.group(2):
                value += int(m.group(2)) * 1_000
            elif m.group(3):
                value += int(m.group(3).replace(",", ""))
        else:
            value = int(m.group(4)) * 1_000
        found[(m.start(), m.end())] = AmountMention(value, m.start(), m.end())
        taken.append((m.start(), m.end()))
    for pattern, may in ((_SUFFIXED, suffixed), (_PREFIXED, prefixed)):
        for m in pattern.finditer(text) if may else ():
            if any(s <= m.start() < e for s, e in taken):
                continue
            value = int(m.group(1).replace(",", ""))
            found[(m.start(), m.end())] = AmountMention(value, m.start(), m.end())
            taken.append((m.start(), m.end()))
    return sorted(found.values(), key=lambda a: a.start)
