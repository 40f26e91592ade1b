"""No example identifier is an argument unless someone in the conversation wrote it (issue 28): a call
whose id nobody wrote (ORD001 copied from an example or made up), or whose value is a visible
placeholder ("ORD…", "<order id>"), is not run; the model reads what to do instead (use the value the
player wrote, or ask).

Amounts are not copy-checked (issue 50): an amount the player asked for, or any amount within the coupon
rules, is never refused because it equals a tool description's example (5000). The coupon tool's own
rules decide; refusing it here turned a "배송 완료라 발급할 수 없습니다" (NOT_ELIGIBLE_STATUS) into an ERROR.

"Written" means anywhere the conversation got it from outside the model: the player's messages and the
tools' results (an id `list_my_orders` returned may be looked up)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from tools.base import Tool, ToolResult
from tools.requirements import is_policy_question, named_order_ids

PLACEHOLDER = re.compile(r"…|\.\.\.|<[^>]*>|^\s*$")
EXAMPLE_VALUE = "example_value"
"""The `reason` of a refused call whose value the model guessed (the run makes the read it needs at once)."""
_NUMBER = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(만|천)?")
_UNITS = {"만": 10_000, "천": 1_000, None: 1}


def example_refusal(
    t: Tool, args: dict[str, Any], known: Iterable[str], player: Iterable[str]
) -> ToolResult | None:
    """The refusal for a call that uses an example or a placeholder as a value; None when it may run."""
    text = "\n".join(known)
    for name, examples in t.example_values.items():
        value = args.get(name)
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, str) and PLACEHOLDER.search(value):
            return _refusal(
                name, f"{value!r} is a placeholder from the tool description, not a value", player
            )
        numeric = isinstance(value, int | float)
        if numeric:
            continue  # an amount is the tool's rules' to judge, never a copied example (module doc)
        norm = str(value).replace(",", "").strip().upper()
        invented_id = not numeric and name.endswith("id")  # an id must come from outside the model
        if (invented_id or norm in examples) and not _written(norm, text, numeric=numeric):
            source = (
                "the example in the tool description" if norm in examples else "not from the conversation"
            )
            # The value is not repeated: the refusal is a tool result the next check reads as "written"
            # (seen live: the same call with the example amount 5000, made again, issued a coupon).
            return _refusal(name, f"the player did not write this {name}; it is {source}", player)
    return None


def _written(value: str, text: str, *, numeric: bool) -> bool:
    if numeric:
        return value in numbers_in(text)
    parts = re.fullmatch(r"([A-Z]+)[-_ ]?(\d+)", value)
    if parts is None:
        return re.search(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![0-9])", text, re.IGNORECASE) is not None
    return id_written(parts.group(1), parts.group(2), text)


_ID_BEFORE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
"""What may not stand right before an id's letters (an id inside a longer word is not that id)."""


def id_written(letters: str, digits: str, text: str) -> bool:
    """Whether `text` writes the id `letters` + `digits` as a player writes it ("ORD101", "ORD 101",
    "ord-101"): its letters (upper-case ASCII) in either case, one of "-", "_", " " or nothing, its
    digits, no ASCII letter or digit before and no digit after.

    The same as searching `(?<![A-Za-z0-9])[Oo][Rr][Dd][-_ ]?101(?!\\d)`, without compiling a pattern per
    id: each new id cost 0.05–0.08 ms of compiling on the loop (0.2 ms under the profiler: 42 ms of the
    200-conversation burst's loop time, 2026-12-07), and a serving bot sees new ids all day. It looks for the digits with
    `str.find` and checks what stands before them (a differential test holds it to the pattern)."""
    n = len(letters)
    at = text.find(digits)
    while at >= 0:
        after = at + len(digits)
        if after >= len(text) or not text[after].isdecimal():
            ends = (at, at - 1) if at > 0 and text[at - 1] in "-_ " else (at,)
            for end in ends:
                start = end - n
                if start < 0 or (start > 0 and text[start - 1] in _ID_BEFORE):
                    continue
                written = text[start:end]
                # ASCII only: "ı".upper() and "ſ".upper() are "I" and "S", which the pattern never took
                if written.isascii() and written.upper() == letters:
                    return True
        at = text.find(digits, at + 1)
    return False


def numbers_in(text: str) -> set[str]:
    """Every number the text writes, as digits: `5,000`, `5000`, `5천`, `0.5만` → `5000`."""
    found: set[str] = set()
    for m in _NUMBER.finditer(text):
        try:
            number = float(m.group(1).replace(",", "")) * _UNITS[m.group(2)]
        except ValueError:
            continue
        if number == int(number):
            found.add(str(int(number)))
    return found


ORDER_TALK = re.compile(
    r"주문|구매|구입|결제|배송|택배|환불|상품|아이템|패키지|쿠폰|보상"
    r"|\b(?:orders?|purchase[ds]?|bought|paid|payments?|deliver(?:y|ed)?|shipping|packages?|refunds?"
    r"|items?|coupons?|compensation)\b",
    re.IGNORECASE,
)
"""A message that speaks of something the player bought: a missing order number is asked for."""

QUESTION_CHARS = 120
"""At most this much of the player's question becomes a suggested search query."""


def question_words(player: Iterable[str]) -> str:
    """The player's latest message, cut to `QUESTION_CHARS`: the query to search with instead of a
    placeholder."""
    said = [" ".join(t.split()) for t in player if t and t.strip()]
    return said[-1][:QUESTION_CHARS] if said else ""


def _refusal(name: str, what: str, player: Iterable[str]) -> ToolResult:
    if name.endswith("id"):
        said = "\n".join(player)
        ids = named_order_ids(said)
        if ids:
            then = f"Use the order number the player wrote: {', '.join(ids)}."
        elif is_policy_question(said):
            then = (
                "The player named no order: they asked about a rule. Call search_policy with their "
                "question and answer from the passage; ask for an order number only if the question "
                "is about one order. Never guess one."
            )
        elif ORDER_TALK.search(said):
            then = "Ask the player for their order number; never guess one."
        else:
            # Seen live (2026-12-04): small talk ("증명 문제 하나만 풀어줄 수 있어?") looked up "ORD…", and
            # the answer asked the player for an order number they never needed.
            then = (
                "The player's message is not about an order: answer what they asked without looking one "
                "up, and do not ask for an order number."
            )
    elif name == "query":
        asked = question_words(player)
        then = (
            f'Search with the words of the player\'s question: {{"query": {json.dumps(asked, ensure_ascii=False)}}}.'
            if asked
            else "Search with the words of the player's question."
        )
    else:
        then = f"Use the {name} the player asked for, or ask the player; never copy the example."
    return ToolResult.error(f"Not run: {what}. {then}", reason=EXAMPLE_VALUE, argument=name)
