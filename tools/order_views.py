"""How orders are named to players and the model: order ids, status labels, the not-found sentence.

Shared by the order tools and the coupon ledger, which both speak about orders.
"""

from __future__ import annotations

from bot.store import ORDER_STATUS_EN, ORDER_STATUSES
from bot.vocabulary.catalogue import ORDER_NOT_FOUND, ORDERS_UNAVAILABLE
from tools.results import ResultCode, ToolResult


def normalize_order_id(order_id: str) -> str:
    """`" ord001 "` → `ORD001`: players type order ids in any case."""
    return order_id.strip().upper()


def status_label(status: str, locale: str = "ko") -> str:
    """`delayed` → `배송 지연 (delayed)`; English adds the Korean label the player sees in the game."""
    ko = ORDER_STATUSES.get(status, status)
    if locale == "ko":
        return f"{ko} ({status})"
    return f"{ORDER_STATUS_EN.get(status, status)} ({status}, {ko})"


def order_not_found_message(order_id: str, locale: str) -> str:
    """The one sentence for a missing order AND for another player's order: they must look identical."""
    return ORDER_NOT_FOUND(locale, order_id=order_id)


def orders_unavailable_message(locale: str) -> str:
    """The SOURCE_UNAVAILABLE sentence: orders cannot be read fresh now; try later or talk to a person."""
    return ORDERS_UNAVAILABLE(locale)


def unavailable_result(locale: str, order_id: str | None = None) -> ToolResult:
    """SOURCE_UNAVAILABLE: the order source could not answer; the player is told so and offered a person."""
    return ToolResult(
        ok=False,
        code=ResultCode.SOURCE_UNAVAILABLE,
        message=orders_unavailable_message(locale),
        data={"order_id": order_id} if order_id else {},
    )
