"""Personal data in the bot's answers: phone numbers, e-mails, card and resident registration numbers
that are not the actor's own are hidden."""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.vocabulary.catalogue import say

_EMAIL = re.compile(r"(?<![A-Za-z0-9_.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}(?![A-Za-z0-9_-])")
_RRN = re.compile(r"(?<![\d-])(\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])\s?-?\s?([1-8])\d{6}(?![\d-])")
_CARD = re.compile(r"(?<![\d\-@&#!:])(?:\d[ -]?){12,18}\d(?![\d\->])")  # not a Discord <@id>/<#id>
_PHONE = re.compile(
    # ASCII-only lookarounds: a Korean particle right after the number ("010-1234-5678입니다") must not hide it.
    r"(?<![A-Za-z0-9_-])(?:\+82[- .]?|0)(?:1[016789]|2|[3-6][1-5]|70)[- .)]?\d{3,4}[- .]?\d{4}(?![A-Za-z0-9_-])"
    r"|(?<![A-Za-z0-9_-])\+\d{1,3}[- .]?\(?\d{1,4}\)?[- .]?\d{3,4}[- .]?\d{4}(?![A-Za-z0-9_-])"
)
_LABELS = {
    "phone": ("[전화번호 비공개]", "[phone number hidden]"),
    "email": ("[이메일 비공개]", "[email hidden]"),
    "card": ("[카드번호 비공개]", "[card number hidden]"),
    "rrn": ("[주민등록번호 비공개]", "[resident registration number hidden]"),
}


def _digits(value: str) -> str:
    d = re.sub(r"\D", "", value)
    return "0" + d[2:] if d.startswith("82") else d


def _luhn(number: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(number)):
        n = int(ch)
        if i % 2:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


def redact_pii(
    text: str, *, locale: str = "ko", own_phones: Iterable[str] = (), own_emails: Iterable[str] = ()
) -> tuple[str, list[str]]:
    """Hide phone numbers, e-mails, card numbers and resident registration numbers that are not the actor's.

    The actor's own phone and e-mail (from their Player row) may be repeated back to them; card and
    resident registration numbers never are.
    """
    phones = {_digits(p) for p in own_phones if p}
    emails = {e.strip().lower() for e in own_emails if e}
    kinds: list[str] = []

    def label(kind: str) -> str:
        kinds.append(kind)
        return say(locale, *_LABELS[kind])

    def rrn(m: re.Match[str]) -> str:
        return label("rrn")

    def card(m: re.Match[str]) -> str:
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return label("card")
        return m.group(0)

    def email(m: re.Match[str]) -> str:
        return m.group(0) if m.group(0).lower() in emails else label("email")

    def phone(m: re.Match[str]) -> str:
        return m.group(0) if _digits(m.group(0)) in phones else label("phone")

    # Cheap tests first (each pattern scans every position: ~25 µs a long sentence for the four): an
    # RRN or a phone number has three digits in a row, a card number thirteen digits, an e-mail an "@".
    # A label put in by one pattern has none of them, so testing the text once decides for all four.
    run = _DIGIT_RUN.search(text) is not None
    if run:
        text = _RRN.sub(rrn, text)
    if sum(map(str.isdecimal, text)) >= _CARD_DIGITS:  # isdecimal: what `\d` matches
        text = _CARD.sub(card, text)
    if "@" in text:
        text = _EMAIL.sub(email, text)
    if run:
        text = _PHONE.sub(phone, text)
    return text, kinds


_DIGIT_RUN = re.compile(r"\d{3}")
_CARD_DIGITS = 13
"""The fewest digits `_CARD` matches (twelve digits, each perhaps followed by a space or dash, then one)."""
