"""A coupon only for a player who asked for one. Seen live (2026-12-03, Qwen2.5-Coder-1.5B, two runs of
six): "How many compensation coupons can I get per day?" and "What is the most reward boxes I can get
when maintenance runs late?" — the model listed the player's orders, looked up the delayed one, asked for
its price as a coupon (over the limit), then for the limit the refusal named, and a 20,000 KRW coupon was
issued to a player who had asked about a rule. Every coupon guard passed: the order was the player's and
delayed, the amount within the limits (the refusal's own text had written it).

So a run whose player asked about a rule (`is_policy_question`) and asked for nothing makes no call that
compensates: the model reads why and answers the question. A sentence of this run's messages that is not
a question about a rule and speaks of compensation ("ORD101 만원 쿠폰 주세요", "can I get a coupon for
ORD301?") is the asking; a message that asks no policy question is left as before (a complaint about a
late order may still be compensated).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.vocabulary.sentences import player_sentences
from tools.base import ToolResult
from tools.requirements import is_policy_question

NOT_ASKED = "not_asked"
"""The `reason` of a compensating call refused because the player asked about a rule, not for it."""

_COMPENSATION = re.compile(r"쿠폰|보상|compensat|coupon", re.IGNORECASE)


def asks_for_compensation(text: str) -> bool:
    """A sentence of `text` that speaks of compensation and is not a question about a rule."""
    return any(_COMPENSATION.search(s) and not is_policy_question(s) for s in player_sentences(text))


def unasked_refusal(player_texts: Sequence[str]) -> ToolResult | None:
    """The refusal for a compensating call in a run whose player asked about a rule and for nothing."""
    said = "\n".join(player_texts)
    if not is_policy_question(said) or asks_for_compensation(said):
        return None
    return ToolResult.error(
        "Not run: the player asked about a rule, not for a coupon. Answer their question from "
        "search_policy; offer compensation only if they ask for it.",
        reason=NOT_ASKED,
    )
