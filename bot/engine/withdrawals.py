"""A player who takes a request back mid-run ("취소할게요, 쿠폰 발급하지 마세요"): from then on the run makes
no call with side effects, whatever the model decides (seen live, 2026-12-02: a 1.5B model read the
cancel and issued the 20,000 KRW coupon anyway). A message the player sends after it counts instead, so
"아니다, 그냥 발급해 주세요" asks again.

Only messages that arrive while the run goes (interrupts) can withdraw: the run's own question asked for
something, and words like "주문 취소" (an order's status) are not a withdrawal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_WITHDRAW_KO = re.compile(
    r"(?<!주문\s)(?<!주문)취소\s*(?:할게|할께|해\s*주|해줘|합니다|하겠|해요|요|이요)"
    r"|(?:발급|진행|처리|보상)\s*(?:을|를|은|는)?\s*(?:하지|안\s*해도|말아|멈춰|그만)"
    r"|하지\s*마(?:세요|요|십시오|라)?|하지\s*말아|그만\s*(?:하세요|해요|해\s*주|두세요)|멈춰|필요\s*없어"
)
_WITHDRAW_EN = re.compile(
    r"\b(?:cancel(?:\s+(?:it|that|this|the\s+(?:coupon|request)))?|never\s*mind|nevermind|stop|"
    r"don'?t\s+(?:issue|do|send|give)|do\s+not\s+(?:issue|do|send|give)|no\s+need|forget\s+it)\b",
    re.IGNORECASE,
)
_ASKS_AGAIN = re.compile(
    r"다시\s*(?:발급|해\s*주|부탁)|그냥\s*(?:발급|해\s*주)|발급\s*해\s*주세요\s*$"
    r"|\bgo\s+ahead\b|(?<!n't\s)(?<!not\s)\bissue\s+it\b",
    re.IGNORECASE,
)


def withdrawal(player_texts: Sequence[str]) -> str | None:
    """The mid-run message that took the request back, when the player's latest message (after the run's
    question) does; None when nothing was withdrawn or a later message asked again."""
    if len(player_texts) < 2:
        return None
    latest = player_texts[-1]
    if _ASKS_AGAIN.search(latest):
        return None
    if _WITHDRAW_KO.search(latest) or _WITHDRAW_EN.search(latest):
        return latest
    return None
