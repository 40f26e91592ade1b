"""When a tool must run before the model may answer (issue 28, "look up before you state"): the player's
words decide, deterministically, and each tool declares its own rule (`Tool.required_before_answer`).

A rule returns the argument sets the tool must have been called with, e.g. `[{"order_id": "ORD101"}]`
for a message naming ORD101, `[{}]` (any arguments) for a policy question, `[]` when not required.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bot.vocabulary.sentences import player_sentences

RequiredArgs = list[dict[str, Any]]
RequirementRule = Callable[[str], RequiredArgs]
"""`rule(what the player wrote) -> the argument sets the tool must be called with before an answer`."""

ORDER_ID = re.compile(r"(?<![A-Za-z0-9])ORD[-_]?\d{2,}(?![A-Za-z0-9])", re.IGNORECASE)
"""Order ids as players type them (ORD101, ord101); the store's ids all have this shape."""


def named_order_ids(text: str) -> list[str]:
    """The order ids the text names, upper-cased, in order of first mention."""
    return list(
        dict.fromkeys(m.group(0).upper().replace("-", "").replace("_", "") for m in ORDER_ID.finditer(text))
    )


def each_named_order(text: str) -> RequiredArgs:
    """`lookup_order`'s rule: one lookup per order id the player named."""
    return [{"order_id": oid} for oid in named_order_ids(text)]


# A policy question asks about a rule: a question (mark, ending or interrogative) AND the vocabulary of
# rules — limits, counts, windows, refunds, policies, and the per-day/week/month of a cap ("하루 10장이죠?":
# a number the player asks to have confirmed is a policy question too, so a search can overrule it). Kept narrow on purpose: "보상 받을 수 있나요?" about
# one order is not a policy question (the order lookup and the coupon guard answer it).
_QUESTION_KO = re.compile(
    r"\?|？|나요|까요|가요|습니까|는지|인지|얼마|몇|언제|며칠|어떻게|무엇|뭐|되나요|있어요\s*$"
)
_QUESTION_EN = re.compile(
    r"\?|^\s*(how|what|when|which|why|is|are|can|could|do|does|will|would|may)\b", re.IGNORECASE
)
_RULE_KO = re.compile(
    r"한도|최대(?!한)|하루|매일|일일|주당|한\s*달에|월\s*최대|최소|몇\s*(장|개|번|회|일|시간|분|퍼센트|%)|며칠|기간|기한|정책|규정|규칙|환불|이내|까지\s*(받|가능|신청)|보상\s*(상자|기준)"
)
_RULE_EN = re.compile(
    r"\b(limit|limits|maximum|max|minimum|how many|how much|how long|refund|refunds|refundable|policy|"
    r"policies|rule|rules|deadline|window|per day|a day|daily|per week|per month|"
    r"eligib\w*|reward boxes?)\b",
    re.IGNORECASE,
)


def is_policy_question(text: str) -> bool:
    """True when the text asks about a rule, limit, count or window (Korean or English)."""
    for sentence in player_sentences(text):
        korean = _QUESTION_KO.search(sentence) and _RULE_KO.search(sentence)
        english = _QUESTION_EN.search(sentence) and _RULE_EN.search(sentence)
        if korean or english:
            return True
    return False


def on_policy_question(text: str) -> RequiredArgs:
    """`search_policy`'s rule: one search (any query) when the player asks a policy question."""
    return [{}] if is_policy_question(text) else []
