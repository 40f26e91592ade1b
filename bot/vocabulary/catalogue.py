"""Player-facing sentences in both languages, each written once, and the one way to pick a language.

A `Text` is a Korean and an English template; `text(locale, **fields)` fills the one for the
conversation's language. A field's format spec may name a particle (`{order_id:을/를}`): the form that
fits the value is written after it ("ORD003을", "P100을"), never "을(를)". One-off sentences that live beside their code use `say(locale, ko, en)`.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from bot.vocabulary.particles import PAIRS, particle


def say(locale: str | None, ko: str, en: str) -> str:
    """The Korean sentence when the conversation is Korean (`ko`), else the English one."""
    return ko if locale == "ko" else en


class _ParticleFormatter(string.Formatter):
    """`{field:을/를}`: the value followed by the particle that fits it (`bot.vocabulary.particles`)."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec in PAIRS or format_spec == "으로/로":
            return particle(str(value), format_spec)
        return super().format_field(value, format_spec)


_FORMATTER = _ParticleFormatter()


@dataclass(frozen=True)
class Text:
    """One sentence in Korean and English; `{name}` placeholders are filled by `text(locale, name=...)`."""

    ko: str
    en: str

    def __call__(self, locale: str | None, **fields: Any) -> str:
        template = say(locale, self.ko, self.en)
        return _FORMATTER.format(template, **fields) if fields else template


ACCOUNT_NOT_LINKED = Text(
    "지금 대화 중인 계정은 게임 계정과 연동되어 있지 않아 {blocked}. 디스코드에서는 운영진에게 계정 연동(/link)을 "
    "요청하시고, 웹에서는 게임에 로그인한 상태로 고객센터를 열어 주세요.{more}",
    "This account is not linked to a game account, so {blocked}. In Discord, ask staff to link it "
    "(/link); on the website, open support while logged in to the game.{more}",
)
"""Every NOT_LINKED / unlinked DENIED message: `blocked` says what cannot be done, `more` what can."""

NOT_LINKED_REASON = Text("계정이 연동되어 있지 않습니다", "the account is not linked")
"""The same fact as a clause, inside a longer sentence."""

STAFF_ONLY_COMMAND = Text("운영진만 쓸 수 있는 명령입니다.", "This command is for staff only.")

ORDER_NOT_FOUND = Text(
    "{order_id} 주문을 찾을 수 없습니다. 주문 번호를 다시 확인해 달라고 요청하세요(예: ORD001). "
    "본인 계정의 주문만 조회할 수 있습니다.",
    "Order {order_id} was not found. Ask the player to check the order number (e.g. ORD001). "
    "Only orders of the player's own account can be looked up.",
)
"""The one sentence for a missing order AND for another player's order: they must look identical (so no
particle after the id: "ORD003을" and "ORD999를" would differ by more than the id)."""

PROMPT_NOT_SHARED = Text("내부 운영 지침은 공개할 수 없습니다.", "I can't share my internal instructions.")

WORKING = Text("확인 중…", "Working on it…")
"""The status line while the bot works and no tool names its own."""

ORDER_NUMBER = Text("주문 번호", "order number")
"""What a player calls an order id (the tools' `order_id` argument)."""

ORDERS_UNAVAILABLE = Text(
    "주문 정보를 지금 확인할 수 없어요. 잠시 후 다시 시도해 주시거나, 원하시면 담당자에게 연결해 드릴게요.",
    "I can't check order information right now. Please try again in a little while, or I can connect you "
    "with a person if you'd like.",
)
"""Every SOURCE_UNAVAILABLE message (DESIGN.md §11): the studio's backend could not be read fresh."""
