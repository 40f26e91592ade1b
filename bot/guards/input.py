"""Input guard: what a player's message may be before it reaches memory and the model.

Oversized messages are refused (nothing is stored); invisible and control characters are removed;
mass mentions are neutralised; prompt-injection and fake-authority phrases are flagged and the
message marked untrusted. Nothing here grants or removes authority: that comes from Discord roles
and account links only.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from bot.vocabulary.catalogue import Text
from bot.vocabulary.language import detect_language

DEFAULT_MAX_CHARS = 4_000
MENTION_SPAM_THRESHOLD = 5
"""This many user/role mentions in one message is spam, not a support question."""

ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u180e\u00ad")
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")

MESSAGE_TOO_LONG = Text(
    "메시지가 너무 깁니다({length}자). 최대 {limit}자까지 받을 수 있으니 핵심만 나눠서 다시 보내 주세요. 이 메시지는 "
    "저장하지 않았습니다.",
    "Your message is too long ({length} characters). The limit is {limit}; please send the key points in "
    "shorter messages. This message was not stored.",
)
MESSAGE_EMPTY = Text(
    "내용이 비어 있는 메시지입니다. 문의 내용을 글로 적어 주세요.",
    "The message has no readable text. Please write your question.",
)

_USER_MENTION = re.compile(r"<@!?(\d+)>")
_ROLE_MENTION = re.compile(r"<@&(\d+)>")
_MASS_MENTION = re.compile(r"@(everyone|here)\b", re.IGNORECASE)

# English patterns run on lower-cased text with single spaces; Korean ones on text without any spaces,
# so "이전 지시를 무시" and "이전지시무시" are the same thing.
_INJECTION_EN = [
    r"\b(ignore|disregard|forget|override|bypass)\b.{0,30}\b(previous|prior|above|earlier|all|your|the)\b.{0,20}"
    r"\b(instructions?|rules?|prompts?|guidelines?|directives?|polic(y|ies))\b",
    r"\bsystem\s*prompt\b",
    r"\b(developer|debug|god|admin|jailbreak|dan)\s+mode\b",
    r"\bjailbreak\b",
    r"\byou are now\b",
    r"\bnew (system )?instructions?\s*:",
    r"\bdo anything now\b",
    r"\b(reveal|show|print|repeat)\b.{0,20}\b(instructions|prompt|rules)\b",
    r"(^|\n)\s*(\[|<\|?|#+\s*)?(system|assistant)(\]|\|?>)?\s*:",
    r"<\|im_start\|>|<\|system\|>",
]
_INJECTION_KO = [
    r"(이전|앞|위|기존|모든|지금까지)(의|에)?(모든)?(지시|지침|명령|규칙|프롬프트|설정)(사항|문)?(을|를|은|는|들)?.{0,6}(무시|잊어|취소|없던)",
    r"(지시|지침|명령|규칙|프롬프트)(을|를|은|는)?(다)?무시",
    r"시스템프롬프트",
    r"(개발자|관리자|디버그|탈옥|갓)모드",
    r"탈옥",
    r"(프롬프트|지시사항|지침)(을|를)?(보여|알려|출력|공개)",
    r"(너는|넌|당신은)이제",
    r"(제한|규칙|정책|한도)(을|를)?(해제|풀어|우회|무시)",
]
_AUTHORITY_EN = [
    r"\bi\s*(am|'m|’m)\s+(an?\s+|the\s+)?(admin|administrator|moderator|mod|staff|gm|game master|developer|dev|"
    r"operator|owner|support agent|manager)\b",
    r"\bas (an?\s+|the\s+)?(admin|administrator|moderator|staff member|gm|developer)\b",
    r"\b(admin|staff|gm|operator)\s+(override|command|authorization|approved|privileges?)\b",
    r"\bauthori[sz]ed by (the )?(admin|staff|gm|operator|developer)s?\b",
]
_AUTHORITY_KO = [
    r"(나는|난|저는|전|제가|내가)(이게임의|여기|이서버)?(운영자|관리자|운영진|개발자|gm|지엠|스태프|어드민|매니저)"
    r"(입니다|이에요|예요|임|인데|이다|다|야|이야|라서|로서|이니까|니까|이고)",
    r"(운영자|관리자|운영진|개발자|gm|지엠|스태프|어드민)(입니다|이에요|예요|임|인데|이다|야|라서|로서)",
    r"(운영자|관리자|운영진|개발자|gm)(권한|명령|지시|승인)(으로|이니|입니다|이야|임)",
]

_compiled_en = [re.compile(p, re.IGNORECASE | re.DOTALL) for p in _INJECTION_EN]
_compiled_ko = [re.compile(p, re.IGNORECASE) for p in _INJECTION_KO]
_compiled_auth_en = [re.compile(p, re.IGNORECASE) for p in _AUTHORITY_EN]
_compiled_auth_ko = [re.compile(p, re.IGNORECASE) for p in _AUTHORITY_KO]


@dataclass(frozen=True)
class InputVerdict:
    """The guard's decision on one message."""

    allowed: bool
    """False: do not store, do not run; send `reply` instead."""
    reason_code: str | None
    """Why it was refused: `too_long`, `empty`; None when allowed."""
    reply: str | None
    """The refusal sentence for the player (Korean when the message is Korean), None when allowed."""
    cleaned_text: str
    """The text to store and give the model (control/invisible characters removed, mentions neutralised)."""
    flags: tuple[str, ...] = ()
    """What was noticed: `control_chars`, `invisible_chars`, `bidi_controls`, `mass_mention`,
    `role_mention`, `mention_spam`, `prompt_injection`, `fake_authority`."""
    untrusted: bool = False
    """True when the text tries to instruct the bot or claims authority; log it, never act on the claim."""
    matches: tuple[str, ...] = field(default_factory=tuple)
    """The phrases that raised `prompt_injection` / `fake_authority`, for the log."""


def _strip_invisible(text: str) -> tuple[str, set[str]]:
    flags: set[str] = set()
    out: list[str] = []
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    for ch in text:
        if ch in ("\n", "\t"):
            out.append(ch)
        elif ch in ZERO_WIDTH:
            flags.add("invisible_chars")
        elif ch in BIDI_CONTROLS:
            flags.add("bidi_controls")
        elif 0xE0000 <= ord(ch) <= 0xE007F:  # Unicode tag characters smuggle invisible ASCII
            flags.add("invisible_chars")
        elif unicodedata.category(ch) == "Cc":
            flags.add("control_chars")
        elif 0xD800 <= ord(ch) <= 0xDFFF:  # a lone surrogate cannot be stored or sent as UTF-8
            flags.add("invalid_unicode")
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out), flags


def neutralize_mentions(text: str, *, users: bool = False) -> tuple[str, set[str]]:
    """Break `@everyone`, `@here`, role mentions (and user mentions when `users`) so they cannot ping."""
    flags: set[str] = set()
    if _MASS_MENTION.search(text):
        flags.add("mass_mention")
        text = _MASS_MENTION.sub(lambda m: "@\u200b" + m.group(1), text)
    if _ROLE_MENTION.search(text):
        flags.add("role_mention")
        text = _ROLE_MENTION.sub(lambda m: "@\u200brole:" + m.group(1), text)
    if users:
        text = _USER_MENTION.sub(lambda m: "@\u200buser:" + m.group(1), text)
    return text, flags


def scan_untrusted(text: str) -> tuple[set[str], list[str]]:
    """Injection and fake-authority heuristics; returns (flags, matched phrases)."""
    folded = unicodedata.normalize("NFKC", text).lower()
    spaced = re.sub(r"\s+", " ", folded)
    squashed = re.sub(r"\s+", "", folded)
    flags: set[str] = set()
    found: list[str] = []
    for pattern in _compiled_en:
        m = pattern.search(spaced)
        if m:
            flags.add("prompt_injection")
            found.append(m.group(0).strip())
    for pattern in _compiled_ko:
        m = pattern.search(squashed)
        if m:
            flags.add("prompt_injection")
            found.append(m.group(0))
    for pattern in _compiled_auth_en:
        m = pattern.search(spaced)
        if m:
            flags.add("fake_authority")
            found.append(m.group(0).strip())
    for pattern in _compiled_auth_ko:
        m = pattern.search(squashed)
        if m:
            flags.add("fake_authority")
            found.append(m.group(0))
    return flags, found


def check_input(text: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> InputVerdict:
    """Decide what to do with one incoming message. Pure: no I/O, the caller logs and stores."""
    locale = detect_language(text)
    if len(text) > max_chars:
        return InputVerdict(
            allowed=False,
            reason_code="too_long",
            reply=MESSAGE_TOO_LONG(locale, length=f"{len(text):,}", limit=f"{max_chars:,}"),
            cleaned_text="",
            flags=("too_long",),
        )
    cleaned, flags = _strip_invisible(text)
    users_spam = len(_USER_MENTION.findall(cleaned)) + len(_ROLE_MENTION.findall(cleaned))
    spam = users_spam >= MENTION_SPAM_THRESHOLD
    cleaned, mention_flags = neutralize_mentions(cleaned, users=spam)
    flags |= mention_flags
    if spam:
        flags.add("mention_spam")
    cleaned = cleaned.strip()
    if not cleaned:
        return InputVerdict(
            allowed=False,
            reason_code="empty",
            reply=MESSAGE_EMPTY(locale if text else "ko"),
            cleaned_text="",
            flags=tuple(sorted(flags | {"empty"})),
        )
    untrusted_flags, matches = scan_untrusted(cleaned)
    flags |= untrusted_flags
    return InputVerdict(
        allowed=True,
        reason_code=None,
        reply=None,
        cleaned_text=cleaned,
        flags=tuple(sorted(flags)),
        untrusted=bool(untrusted_flags),
        matches=tuple(matches),
    )
