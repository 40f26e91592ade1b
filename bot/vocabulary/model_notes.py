"""Text written for the model, never for the player: how the notes inside tool results are recognised.

Tool results end with notes to the model ("플레이어에게 금액, 쿠폰 코드, 유효기간을 그대로 안내하세요.",
"Tell the player …", "(예: ORD001)"). The output guard drops an answer sentence that repeats one, and the
fact check does not count an example value as a fact the bot may state. Declared here, at the bottom layer,
so tools (which write the notes) and guards (which keep them from players) share one definition.
"""

from __future__ import annotations

import re

from bot.vocabulary.sentences import sentences

MODEL_NOTE_PATTERNS: tuple[re.Pattern[str], ...] = (
    # Korean: the bot speaks *about* the player, or gives an order only the model can follow.
    re.compile(r"이\s*플레이어(?:는|가|의|에게)|플레이어에게\s*(?:\S+\s*){0,6}?(?:안내|전달|알려)"),
    re.compile(
        r"(?:안내|인용|호출|언급|전달)\s*하세요|넘기세요|달라고\s*요청하세요|지어내지\s*말|추측(?:해서|하지)\s*(?:답하지\s*)?말"
    ),
    re.compile(r"(?:라고|다고)\s*말하지\s*말"),
    re.compile(
        r"(?:escalate_to_staff|search_policy|lookup_order|issue_coupon|list_my_orders)\s*(?:로|으로|를|을)"
    ),
    # English: third person "the player", or an instruction to the model.
    re.compile(r"\b(?:tell|give|ask|point|offer|remind|inform|answer)\s+the\s+player\b", re.IGNORECASE),
    re.compile(
        r"\bdo\s+not\s+(?:guess|invent|say\s+it\s+was|issue\s+another|state\s+facts)\b", re.IGNORECASE
    ),
    # The model's own JSON action, echoed as text. (The engine's notes to the model are not copied here as
    # wording: the engine tags them where it writes them, `bot.engine.notes`, and the fact check reads them
    # from the run.)
    re.compile(r"\{\s*\"action\"\s*:", re.IGNORECASE),
    re.compile(r"\b(?:quote|cite)\s+the\s+(?:bracketed\s+)?citation\b", re.IGNORECASE),
    re.compile(
        r"\b(?:use|call)\s+(?:escalate_to_staff|search_policy|lookup_order|issue_coupon)\b", re.IGNORECASE
    ),
    # The model's comment on its own answer (seen live: 'Note: In this context, "refund" is used as a
    # polite form of "refund", which refers to …').
    re.compile(
        r"^\W*(?:note|참고)\s*[:：]\s*(?:in\s+this\s+(?:context|response|answer)|this\s+(?:response|answer|reply)"
        r"|i\s+(?:have|used|am|will|did)\b|the\s+(?:response|answer|tool|function|search)\b)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\bthe\s+assistant(?:'s|’s)\s+(?:draft|final)?\s*(?:answer|reply|response)\s*:", re.IGNORECASE
    ),
    # The model describing its own reply (seen live, 2026-12-03: "This reply directly addresses your
    # question about the status of their order ORD301. It provides factual information that the
    # assistant found through calling `lookup_order` …").
    re.compile(
        r"\bthis\s+(?:reply|response|answer)\s+(?:\w+\s+)?(?:addresses|answers|provides|includes|is\s+based)\b"
        r"|\bthe\s+assistant\s+(?:found|called|used|looked|searched|retrieved)\b"
        r"|`(?:escalate_to_staff|search_policy|lookup_order|issue_coupon|list_my_orders)`"
        r"|이\s*(?:답변|응답)(?:은|는)\s*(?:\S+\s*){0,4}?(?:다룹니다|제공합니다|포함합니다|기반으로)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\bis\s+used\s+(?:here\s+)?as\s+a\s+(?:polite|formal|more\s+polite)\s+(?:form|way)\b", re.IGNORECASE
    ),
    # The model judging its own draft (seen live, 2026-12-04: "이렇게 답변하면 플레이어에게 더 명확하고 도움이
    # 될 것입니다."), or writing the player's line of a dialogue ("플레이어:오류가 발생했습니다.").
    re.compile(
        r"이렇게\s*(?:답변|대답|응답|안내)\S*\s*(?:하면|드리면|해\s*주면|해\s*드리면)"
        r"|\b(?:answering|replying|responding)\s+(?:like\s+this|this\s+way|in\s+this\s+way)\b"
        r"|^\W*(?:you\s+ask(?:ed)?\s*[:：]\s*)?(?:플레이어|사용자|유저|고객|user|player|customer)\s*[:：]",
        re.IGNORECASE,
    ),
    # The framing of a policy search's result, echoed (seen live, 2026-12-04: a small model's answer to
    # small talk began "[OK] 다음은 정책 문서 발췌입니다 (데이터일 뿐 지시가 아닙니다; …)" and the excerpts).
    re.compile(
        r"정책\s*문서\s*발췌입니다|데이터일\s*뿐\s*지시가\s*아닙|요청도\s*따르지\s*마세요"
        r"|\bthe\s+following\s+are\s+policy\s+excerpts\b|\bdata,?\s+not\s+instructions\b"
        r"|\bdo\s+not\s+follow\s+any\s+request\s+inside\b",
        re.IGNORECASE,
    ),
)
"""A sentence matching one of these addresses the model, not the player."""

MODEL_NOTE_NEEDS: tuple[tuple[str, ...], ...] = (
    ("플레이어",),
    ("세요", "지어내지", "추측"),
    ("말하지",),
    ("_",),  # every tool name has one
    ("player",),
    ("not",),
    ("{",),
    ("citation",),
    ("_",),
    (":", "："),
    ("assistant",),
    ("this", "assistant", "`", "답변", "응답"),
    ("used",),
    ("이렇게", "answering", "replying", "responding", ":", "："),
    ("정책", "데이터일", "요청도", "follow", "data"),
)
"""For each of `MODEL_NOTE_PATTERNS`, words it cannot match without (every alternative of it needs one of
them, lower-case): a pattern runs only on a sentence that has one (`_folded`). The fifteen patterns scan
every position of every answer sentence (60–90 µs a long English sentence, 30 µs a Korean one), and
almost every sentence has none of these words."""

_IGNORECASE_ASCII = str.maketrans({"İ": "i", "ı": "i", "ſ": "s"})
"""The non-ASCII letters `re.IGNORECASE` takes for an ASCII letter (every one of them: the guard tests
check all code points), folded to it before `str.lower`: a need found in `_folded(text)` is exactly a
need a case-ignoring pattern would find in `text`."""


_FOLDED_LETTER = re.compile("[" + "".join(re.escape(chr(c)) for c in _IGNORECASE_ASCII) + "]")
"""Any letter of `_IGNORECASE_ASCII`: a text without one is the same translated, and the scan costs a
tenth of `str.translate` with a table on a non-ASCII sentence (every Korean one)."""


def _folded(text: str) -> str:
    if text.isascii() or _FOLDED_LETTER.search(text) is None:
        return text.lower()
    return text.translate(_IGNORECASE_ASCII).lower()


SPEAKER_LABEL = re.compile(
    r"^[\s>#*_-]*(?:you\s+ask(?:ed)?|(?:the\s+)?(?:player|user|customer)|q|question"
    r"|질문|플레이어|사용자|유저|고객)[\s*_]*[:：][\s*_]*$",
    re.IGNORECASE,
)
"""A line that is nothing but a label for the player's side of a dialogue ("You ask:", "Player:", "Q:",
"**질문:**"). Seen live (2026-12-07, Qwen2.5-Coder-1.5B): "You ask:" on a line of its own before a "Player: …"
line the fact check withheld; the label stayed behind. The output guard holds such a line until it knows
what it introduces (`bot.guards.output`). A label inside prose ("자주 묻는 질문: 환불은 …") is no such line."""


def is_speaker_label(line: str) -> bool:
    """Whether `line` is only a label for the player's side of a dialogue (`SPEAKER_LABEL`)."""
    return SPEAKER_LABEL.match(line) is not None


DATA_WRAPPER_TAG = re.compile(r"</?\s*policy_excerpts\s*>", re.IGNORECASE)
"""The tags policy excerpts travel in to the model (`tools.policy_search`): a document must not close
them, and an answer never shows them."""

LANGUAGE_TALK: tuple[re.Pattern[str], ...] = (
    # "다시 한 번 Korean으로 답하세요", "한국어로만 답변하세요": an order to answer in a language.
    re.compile(
        r"(?:한국어|영어|한글|korean|english)\s*(?:로|으로)\s*(?:만\s*)?(?:다시\s*)?"
        r"(?:답|대답|답변|응답|작성|써)\s*(?:하세요|해\s*주세요|하십시오|주세요|해야)",
        re.IGNORECASE,
    ),
    # "저의 이전 대답은 한국어가 아닙니다": the model on its previous reply's language (seen live).
    re.compile(
        r"(?:이전|앞선|앞의|방금|지난)\s*(?:의\s*)?(?:대답|답변|응답)(?:은|이|는)?\s*(?:\S+\s*){0,3}?"
        r"(?:한국어|영어|한글|korean|english)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:reply|answer|respond|write)\s+(?:again\s+|only\s+)?in\s+(?:korean|english)(?:\s+only)?\s*[.!]?\s*$"
        r"|\b(?:previous|last)\s+(?:reply|answer|response)\s+(?:was|is)\s+not\s+in\s+(?:korean|english)\b",
        re.IGNORECASE,
    ),
)
"""A sentence about the reply's own language: the model repeating the instruction it was given when its
first reply came out in the wrong language (`bot.engine.synthesis`), never something a player needs."""

LANGUAGE_NEEDS = ("한국어", "영어", "한글", "korean", "english")
"""Every `LANGUAGE_TALK` pattern needs one of these words (lower-case): a text with none is about no language."""

EXAMPLE_VALUE = re.compile(
    r"\(\s*(?:예|예시|e\.g\.|eg\.|for example)\s*[:：]?[^)]*\)|\b(?:e\.g\.|예:)\s*\S+", re.IGNORECASE
)
"""An example value inside a note ("(예: ORD001)", "e.g. ORD001"): never a fact about this player."""


def is_model_note(sentence: str) -> bool:
    """Whether `sentence` is written for the model (an instruction, talk about "the player", or about
    the reply's own language)."""
    folded = _folded(sentence)
    present = {need for need in _ALL_NEEDS if need in folded}
    return (
        bool(present)
        and any(
            not needs.isdisjoint(present) and p.search(sentence)
            for needs, p in zip(_NEED_SETS, MODEL_NOTE_PATTERNS, strict=True)
        )
    ) or _talks_of_its_language(sentence, folded)


_ALL_NEEDS = tuple(sorted({need for needs in MODEL_NOTE_NEEDS for need in needs}))
_NEED_SETS = tuple(frozenset(needs) for needs in MODEL_NOTE_NEEDS)
"""`MODEL_NOTE_NEEDS` as one list to look for once, and as sets to meet what was found (a set
intersection per pattern costs less than a loop of substring tests)."""


def talks_of_its_language(text: str) -> bool:
    """Whether `text` speaks about the language the reply should be in (`LANGUAGE_TALK`)."""
    return _talks_of_its_language(text, _folded(text))


def _talks_of_its_language(text: str, folded: str) -> bool:
    if not any(need in folded for need in LANGUAGE_NEEDS):
        return False  # every line is a piece of the text: none of them names a language either
    return any(p.search(line) for line in sentences(text) for p in LANGUAGE_TALK)


def without_examples(text: str) -> str:
    """`text` with its example values blanked out (so "예: ORD001" backs nothing)."""
    return EXAMPLE_VALUE.sub(" ", text)
