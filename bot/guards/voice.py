"""The bot speaks to the player, not about them.

Seen live (2026-12-02) from a small model: "The order is currently in delivery delayed status … The player
can ask for a refund from the staff to get compensation." An English answer sentence that calls the
player "the player" / "the user" / "the customer" is written again in the second person ("You can ask …",
"your order"); one that cannot be rewritten safely (the phrase stays somewhere this module does not
understand) is delivered as written: dropping it could empty an answer. Our English policy lines never
say "the player", so no policy sentence is rewritten. Korean is left to the model-note patterns (`bot.vocabulary.model_notes`:
"이 플레이어는 …"): the Korean policies themselves say "플레이어 1명이 …" in their own voice.

A sentence that narrates the bot's own reply ("The assistant replied directly to you, stating that the most
reward boxes … is 3.", seen live 2026-12-02) is delivered as what it reports ("The most reward boxes …
is 3."), so the fact check weighs the statement itself.
"""

from __future__ import annotations

import re

from bot.guards.paraphrase import is_english

_NOT_THEM = (
    r"(?!\s+(?:service|support|center|centre|agreement|ids?|names?|guide|community|base|account|data)\b)"
)
_THIRD = rf"(?:the|this)\s+(?:player|user|customer)\b{_NOT_THEM}"
"""The player spoken of in the third person ("the player", "this user"); not "the customer service"."""
_PRESENT = re.compile(rf"\b{_THIRD}", re.IGNORECASE)
_POSSESSIVE = re.compile(rf"\b{_THIRD}(?:'s|’s)", re.IGNORECASE)
_VERBS = {
    "is": "are",
    "was": "were",
    "has": "have",
    "does": "do",
    "isn't": "aren't",
    "wasn't": "weren't",
    "hasn't": "haven't",
    "doesn't": "don't",
    "gets": "get",
    "receives": "receive",
    "needs": "need",
    "wants": "want",
    "asks": "ask",
    "requests": "request",
    "qualifies": "qualify",
    "contacts": "contact",
    # the past is the same for "you" (seen live: "The player received a 5,000 KRW coupon …")
    **{v: v for v in "received got asked requested ordered wrote bought paid did had".split()},
}
_MODALS = "can cannot can't may will won't should must could would might".split()
_SUBJECT = re.compile(
    rf"\b{_THIRD}\s+(?P<verb>{'|'.join(re.escape(v) for v in [*_VERBS, *_MODALS])})\b", re.IGNORECASE
)
_OBJECT = re.compile(rf"\b(?P<prep>to|for|with|from|by|of|help|contact)\s+{_THIRD}", re.IGNORECASE)


_NARRATION = re.compile(
    r"^(?:the|this|your)\s+(?:assistant|bot|agent|ai|support\s+bot)\s+(?:has\s+|have\s+|had\s+)?"
    r"(?:replied|responded|answered|said|stated|explained|confirmed|told\s+you|informed\s+you)"
    r"(?:\s+directly)?(?:\s+to\s+(?:you|the\s+(?:player|user|customer)))?(?:\s+directly)?\s*,?\s*"
    r"(?:(?:by\s+)?(?:stating|saying|explaining|confirming|noting)\s+)?(?:that\s+|:\s*)",
    re.IGNORECASE,
)
"""The bot narrating its own reply in the third person, up to what it reports."""


def _cap(match_start: int, word: str) -> str:
    return word[0].upper() + word[1:] if match_start == 0 else word


def without_narration(sentence: str) -> str | None:
    """What a sentence narrating the bot's reply reports, as a sentence of its own; None when it narrates
    nothing (or nothing is left after the narration)."""
    lead = len(sentence) - len(sentence.lstrip())
    m = _NARRATION.match(sentence[lead:])
    if m is None:
        return None
    rest = sentence[lead + m.end() :]
    if len(rest.strip()) < 3:
        return None
    return sentence[:lead] + rest[0].upper() + rest[1:]


def to_the_player(sentence: str) -> str | None:
    """`sentence` said to the player, or None: it does not speak about them (nor narrates the bot's
    reply), or it does in a way this cannot rewrite whole (then it is left as written)."""
    reported = without_narration(sentence)
    if reported is not None:
        return to_the_player(reported) or reported
    if not _PRESENT.search(sentence) or not is_english(sentence):
        return None
    lead = len(sentence) - len(sentence.lstrip())
    body = sentence[lead:]
    body = _POSSESSIVE.sub(lambda m: _cap(m.start(), "your"), body)

    def subject(m: re.Match[str]) -> str:
        verb = m.group("verb")
        said = _VERBS.get(verb.lower(), verb.lower())
        return _cap(m.start(), "you") + " " + said

    body = _SUBJECT.sub(subject, body)
    body = _OBJECT.sub(lambda m: f"{m.group('prep')} you", body)
    if _PRESENT.search(body):
        return None
    return sentence[:lead] + body
