"""The claim check's mailbox rule: a sentence saying a reward reached the player's in-game mailbox
("우편함에 도착했습니다", "it is in your mailbox now"; with `ARCA_COUPON_DELIVERY=game` also "지급 완료")
is true only when the game confirmed every grant it speaks of (their delivery jobs `delivered`). Before
that the bot says the coupon was issued and is on its way; with delivery `none` nothing goes to a
mailbox, so it says to enter the code in the game."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bot.guards.claims import _negated_en
from bot.guards.facts import fold_case
from bot.store import Store
from bot.vocabulary.catalogue import Text
from tools.results import ResultCode

ON_ITS_WAY = Text(
    "쿠폰은 발급되었고 게임 우편함으로 보내는 중입니다. 도착까지 잠시 걸릴 수 있습니다.",
    "The coupon has been issued and is on its way to your in-game mailbox; it can take a moment to arrive.",
)
DELIVERY_PROBLEM = Text(
    "쿠폰은 발급되었지만 게임 우편함으로 보내는 데 문제가 있어 운영진이 확인하고 있습니다.",
    "The coupon has been issued, but sending it to your in-game mailbox ran into a problem; staff are on it.",
)
ENTER_THE_CODE = Text(
    "쿠폰은 발급되었습니다. 게임에서 쿠폰 코드 {codes:을/를} 입력해 사용해 주세요.",
    "The coupon has been issued. Enter the code {codes} in the game to use it.",
)

_NOT_DONE_KO = (
    r"(?!\s*(?:는지|는가|나요|나\?|을까|을지|다면|으면|면|하면|할|하지|예정|될|되면|되지|되는지|하기|해야|합니다|해요|"
    r"지\s*않|지\s*못))"
)
"""Not a claim: a question ("도착했는지"), a condition ("도착하면"), a plan ("도착할 예정") or a negation."""
_MAILBOX_KO = re.compile(
    r"우편함\S*\s*(?:\S+\s*){0,4}?(?:도착\s*(?:했|하였|해\s*있|완료|되었|됐)|들어\s*(?:갔|왔|가\s*있|와\s*있)|"
    r"넣어\s*(?:드렸|두었|뒀)|(?:보내|발송|지급)\s*(?:드렸|했|하였|되었|됐|완료))" + _NOT_DONE_KO
)
_GRANTED_KO = re.compile(
    r"(?:게임|인게임|보상|쿠폰)\S*\s*(?:\S+\s*){0,3}?지급\s*(?:이|을)?\s*(?:완료|되었|됐|했)" + _NOT_DONE_KO
)
_MAILBOX_EN = re.compile(
    r"\b(?:arrived|delivered|sent|added|granted|credited|landed|waiting|is|are|now)\b[^.!?]{0,40}?"
    r"\b(?:in|to|into)\s+your\s+(?:in-game\s+|game\s+)?(?:mail\s*box|inbox)\b",
    re.IGNORECASE,
)
_FUTURE_EN = re.compile(
    r"\b(?:will|shall|going to|soon|shortly|being|on (?:its|their) way|once|after)\b", re.IGNORECASE
)
_CODE = re.compile(r"(?<![A-Za-z0-9])ARCA-[A-Z0-9]{4}-[A-Z0-9]{4}(?![A-Za-z0-9])", re.IGNORECASE)
_ORDER = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{2,5}\d{2,})(?![A-Za-z0-9])")


@dataclass(frozen=True)
class Arrival:
    """A sentence's claim that rewards reached the mailbox, and the coupons or orders it names."""

    codes: tuple[str, ...] = ()
    orders: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unconfirmed:
    """An arrival the game has not confirmed: why, and the sentence to say instead (None: say what the
    run really did, the claim check's truthful sentence)."""

    why: str
    sentence: str | None


def _claims_arrival_en(text: str) -> bool:
    for m in _MAILBOX_EN.finditer(text):
        clause = text[: m.end()]
        if not _negated_en(text, m.start()) and not _FUTURE_EN.search(clause[max(0, m.start() - 40) :]):
            return True
    return False


def parse_arrival(sentence: str, *, granted_means_mailbox: bool = False) -> Arrival | None:
    """The arrival `sentence` claims, or None. `granted_means_mailbox` (delivery `game`): "지급 완료"
    of a reward says it is in the game, too."""
    # Cheap tests first: each pattern needs a word ("우편함"; "box" of "mailbox"/"inbox", case ignored;
    # "지급"), and most sentences have none (the English pattern alone scanned ~20 µs a long sentence).
    korean, english = "우편함" in sentence, "box" in fold_case(sentence)
    granted = granted_means_mailbox and "지급" in sentence
    if not (korean or english or granted):
        return None
    text = re.sub(r"\s+", " ", sentence)
    claimed = (korean and bool(_MAILBOX_KO.search(text))) or (english and _claims_arrival_en(text))
    if not claimed and granted:
        claimed = bool(_GRANTED_KO.search(text))
    if not claimed:
        return None
    codes = tuple(dict.fromkeys(c.upper() for c in _CODE.findall(text)))
    orders = tuple(dict.fromkeys(o.upper() for o in _ORDER.findall(_CODE.sub(" ", text))))
    return Arrival(codes, orders)


async def _coupons_of(arrival: Arrival, outcomes: Iterable[Any], store: Store | None) -> list[str]:
    """The codes of the coupons the claim speaks of: named, else the named orders' live coupons, else this
    run's issued ones."""
    if arrival.codes:
        return list(arrival.codes)
    if arrival.orders and store is not None:
        return [c.code for c in await store.coupons.active(orders=arrival.orders)]
    issued = (ResultCode.ISSUED, ResultCode.ALREADY_ISSUED)
    return [
        str(o.coupon["code"])
        for o in outcomes
        if o.code in issued and isinstance(o.coupon, dict) and o.coupon.get("code")
    ]


async def unconfirmed_arrival(
    sentence: str, outcomes: Iterable[Any], store: Store | None, locale: str
) -> Unconfirmed | None:
    """None when `sentence` claims no arrival, or every grant it speaks of is confirmed by the game."""
    game = store is not None and store.game_deliveries.enabled
    arrival = parse_arrival(sentence, granted_means_mailbox=game)
    if arrival is None:
        return None
    codes = await _coupons_of(arrival, list(outcomes), store)
    if not codes:
        return Unconfirmed("no coupon behind the mailbox claim", None)
    states = await store.game_deliveries.grant_states(codes) if store is not None else {}
    if all(states.get(c) == "delivered" for c in codes):
        return None
    if any(c not in states for c in codes):
        shown = ", ".join(codes)
        return Unconfirmed(
            "coupon delivery is off: nothing goes to the mailbox", ENTER_THE_CODE(locale, codes=shown)
        )
    if any(states[c] == "dead" for c in codes):
        return Unconfirmed("the game refused the grant", DELIVERY_PROBLEM(locale))
    return Unconfirmed("the game has not confirmed the grant yet", ON_ITS_WAY(locale))
