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
    r"\b(?:cancel(?:\s+(?:it|that|this|the\s+(?:coupon|request)))?|never\s*mind|nevermind|"
    r"(?<!n't\s)(?<!n’t\s)(?<!not\s)(?<!never\s)stop(?!\s+\w+ing\b)|"
    r"don'?t\s+(?:issue|do|send|give)|do\s+not\s+(?:issue|do|send|give)|no\s+need|forget\s+it)\b",
    re.IGNORECASE,
)
""""stop" alone or as an order; not "it won't stop crashing" (seen: a coupon request whose complaint said
the game would not stop crashing was read as a withdrawal)."""
_ASKS_AGAIN = re.compile(
    r"다시\s*(?:발급|해\s*주|부탁)|그냥\s*(?:발급|해\s*주)|발급\s*해\s*주세요\s*$|빨리\s*(?:발급|해|부탁|주세요|줘)"
    r"|\bgo\s+ahead\b|(?<!n't\s)(?<!not\s)\bissue\s+it\b"
    r"|(?<!n't\s)(?<!not\s)\bplease\s+(?:give|issue|send)\b|\b(?:give|issue|send)\s+(?:me\s+)?(?:the|a|my)\s+coupon\b",
    re.IGNORECASE,
)
_PIECES = re.compile(r"(?<=[.!?？。])\s+|\n+|,\s+")
_QUESTION = re.compile(r"[?？]\s*$|(?:나요|가요|까요|니까|는지|건지)\s*$")
"""A question ("발급 안 해도 되는 건가요?") asks; it takes nothing back."""


def withdrawal(player_texts: Sequence[str]) -> str | None:
    """The mid-run message that took the request back, when the player's latest message (after the run's
    question) does; None when nothing was withdrawn or a later message asked again."""
    if len(player_texts) < 2:
        return None
    latest = player_texts[-1]
    withdrawn = False
    for piece in _PIECES.split(
        latest
    ):  # the last piece that decides wins: "취소할게요, 아니 그냥 발급해 주세요"
        if _ASKS_AGAIN.search(piece):
            withdrawn = False
        elif not _QUESTION.search(piece) and (_WITHDRAW_KO.search(piece) or _WITHDRAW_EN.search(piece)):
            withdrawn = True
    return latest if withdrawn else None
