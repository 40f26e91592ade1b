"""The bot speaks to the player, not about them.

Seen live (2026-12-02) from a small model: "The order is currently in delivery delayed status … The player
can ask for a refund from the staff to get compensation." An English answer sentence that calls the
player "the player" / "the user" / "the customer" is written again in the second person ("You can ask …",
"your order"); one that cannot be rewritten safely (the phrase stays somewhere this module does not
understand) is delivered as written: dropping it could empty an answer. Our English policy lines never
say "the player", so no policy sentence is rewritten. In Korean, the player as the subject of a modifier
("플레이어가 작성한 주문 번호", seen live 2026-12-04) is said with the honorific ("작성하신 주문 번호"), and
"플레이어의 주문" becomes "주문"; the rest is left to the model-note patterns (`bot.vocabulary.model_notes`:
"이 플레이어는 …"), since the Korean policies themselves say "플레이어 1명이 …" and "다른 플레이어의 …".

A sentence that narrates the bot's own reply ("The assistant replied directly to you, stating that the most
reward boxes … is 3.", seen live 2026-12-02) is delivered as what it reports ("The most reward boxes …
is 3."), so the fact check weighs the statement itself.

A label the model puts before its own answer ("답변:", "Answer:") is left out; the answer stays.

A tool's name is the model's word, never the player's (seen live 2026-12-04: "escalate_to_staff에 문의해
주세요"). A sentence that names one says what the player calls it (the tool's `player_name`: "운영진에
문의해 주세요"), with the Korean particle after it chosen again for the new word. Sentences that are notes
to the model ("escalate_to_staff로 넘기세요") are not said at all (`bot.vocabulary.model_notes`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from bot.guards.paraphrase import is_english
from bot.knowledge.analysis import honorific_modifier
from bot.vocabulary.catalogue import Text
from bot.vocabulary.language import has_hangul
from bot.vocabulary.particles import fitting_form

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


_OWN_LABEL = re.compile(
    r"^(?P<lead>\s*)(?:\*\*)?(?:답변|대답|응답|어시스턴트|봇|answer|response|reply|assistant|bot)(?:\*\*)?\s*[:：]"
    r"(?:\*\*)?[ \t]*",
    re.IGNORECASE,
)
"""The model's label before its own answer ("답변:", "**Answer:**"; seen live 2026-12-04:
"답변:\n죄송합니다, …")."""


def without_own_label(sentence: str) -> str | None:
    """`sentence` without the label the model put before its answer, or None when it has none."""
    m = _OWN_LABEL.match(sentence)
    if m is None:
        return None
    return m.group("lead") + sentence[m.end() :]


_KO_PLAYER = re.compile(
    r"(?<![가-힣])플레이어(?:님)?(?:(?:가|께서)\s+(?P<verb>[가-힣]+(?:\s+(?:주신|주는|주실|준|주던))?)|의\s+)"
)
"""The player in a Korean sentence's third person: as the subject of a modifier ("플레이어가 작성한 주문
번호") or as an owner ("플레이어의 주문")."""
_SOMEONE_ELSE = ("다른", "모든", "각", "여러", "어떤", "그", "한", "해당")
"""Words before 플레이어 that make it someone else ("다른 플레이어의 주문", a policy's own words)."""


def _korean_to_the_player(sentence: str) -> str | None:
    """Seen live (2026-12-04): "플레이어가 작성한 주문 번호를 입력해 주세요." The player's own modifier is said
    with the honorific and no subject ("작성하신 주문 번호를 …"), their belongings with no owner ("플레이어의
    주문" → "주문"); anything else about "플레이어" (a policy's "플레이어 1명이", "다른 플레이어") stays."""
    changed = False

    def said(m: re.Match[str]) -> str:
        nonlocal changed
        before = sentence[: m.start()].split()
        if before and before[-1] in _SOMEONE_ELSE:
            return m.group(0)
        if m.group("verb") is None:  # 플레이어의 X → X
            changed = True
            return ""
        honoured = honorific_modifier(m.group("verb"))
        if honoured is None:  # "플레이어가 부담합니다": a statement, not a modifier
            return m.group(0)
        changed = True
        return honoured

    rewritten = _KO_PLAYER.sub(said, sentence)
    return rewritten if changed else None


def to_the_player(sentence: str) -> str | None:
    """`sentence` said to the player, or None: it does not speak about them (nor narrates the bot's
    reply), or it does in a way this cannot rewrite whole (then it is left as written)."""
    reported = without_narration(sentence)
    if reported is not None:
        return to_the_player(reported) or reported
    if "플레이어" in sentence:
        return _korean_to_the_player(sentence)
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


@lru_cache(maxsize=32)
def _tool_name_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(
        rf"(?P<the>\bthe\s+)?`?(?<![A-Za-z0-9_])(?P<name>{alternatives})(?![A-Za-z0-9_])`?"
        r"(?:\s+(?:tool|function|feature)\b|\s*(?:도구|툴|함수|기능))?"
        r"(?P<particle>으로|로|을|를|이|가|은|는|과|와)?",
        re.IGNORECASE,
    )


def tool_names_said(sentence: str, names: Mapping[str, Text]) -> str | None:
    """`sentence` with each tool it names said in the player's words (`names`: tool name → what the
    player calls it), or None when it names none."""
    if not names:
        return None
    korean = has_hangul(sentence)
    by_name = {n.lower(): words for n, words in names.items()}

    def said(m: re.Match[str]) -> str:
        words = by_name[m.group("name").lower()]("ko" if korean else "en")
        the = m.group("the") or ""
        if the and words.split()[0].lower() in ("our", "your"):
            the = ""
        particle = m.group("particle")
        return the + words + (fitting_form(words, particle) if particle else "")

    pattern = _tool_name_pattern(tuple(names))
    lead = len(sentence) - len(sentence.lstrip())
    first = pattern.match(sentence, lead)
    rewritten, count = pattern.subn(said, sentence)
    if not count:
        return None
    if first is not None and not korean:  # the sentence began with the name: it begins with a capital
        rewritten = rewritten[:lead] + rewritten[lead].upper() + rewritten[lead + 1 :]
    return rewritten
