"""Order tools: `lookup_order` and `list_my_orders`. A player sees only their own orders (staff: any)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bot.game.orders import SourceUnavailable
from bot.store import ORDER_STATUSES
from bot.vocabulary.catalogue import ACCOUNT_NOT_LINKED, ORDER_NUMBER, Text
from bot.vocabulary.particles import particle
from tools.base import ResultCode, ToolContext, ToolResult, tool
from tools.coupon_messages import describe_coupon
from tools.local_time import local_date
from tools.money import format_krw
from tools.order_views import (
    normalize_order_id,
    order_not_found_message,
    status_label,
    unavailable_result,
)
from tools.requirements import each_named_order

LIST_LIMIT = 10
"""`list_my_orders` shows at most this many orders, most recent first."""


class LookupOrderArgs(BaseModel):
    order_id: str = Field(
        description="The order number exactly as the player wrote it, e.g. ORD…; never make one up."
    )


class ListMyOrdersArgs(BaseModel):
    status: str | None = Field(
        default=None,
        description="Only orders with this status code, e.g. delayed. One of: "
        + ", ".join(ORDER_STATUSES)
        + ".",
    )


def _not_linked(ctx: ToolContext) -> ToolResult:
    return ToolResult(
        ok=False,
        code=ResultCode.NOT_LINKED,
        message=ACCOUNT_NOT_LINKED(
            ctx.locale, blocked=ctx.say("주문을 조회할 수 없습니다", "orders cannot be looked up"), more=""
        ),
    )


@tool(
    name="lookup_order",
    status=Text("주문 정보를 확인하고 있어요", "Checking your order"),
    player_name=Text("주문 조회", "order lookup"),
    argument_words={"order_id": ORDER_NUMBER},
    required_before_answer=each_named_order,
)
async def lookup_order(args: LookupOrderArgs, ctx: ToolContext) -> ToolResult:
    """Look up one of the player's orders by the order number they wrote (ORD and digits): item, amount, status and any coupon on it.

    Use this before deciding on compensation: the status tells whether the order is delayed. A message
    that names no order needs no lookup: answer it, or ask for the number if it is about an order.
    """
    oid = normalize_order_id(args.order_id)
    if not ctx.actor.player_id and not ctx.actor.is_staff:
        await _audit(ctx, oid, ResultCode.NOT_LINKED, {"why": "not_linked"})
        return _not_linked(ctx)
    try:
        order = await ctx.orders.order(oid) if oid else None
    except SourceUnavailable as exc:
        await _audit(ctx, oid, ResultCode.SOURCE_UNAVAILABLE, {"why": exc.reason})
        return unavailable_result(ctx.locale, oid)
    mine = order is not None and (ctx.actor.is_staff or order.player_id == ctx.actor.player_id)
    coupon = await ctx.store.orders.live_coupon(oid) if mine and order is not None else None
    if not mine:
        # Another player's order must be indistinguishable from a missing one; only the audit knows which.
        await _audit(
            ctx, oid, ResultCode.ORDER_NOT_FOUND, {"why": "missing" if order is None else "other_player"}
        )
        return ToolResult(
            ok=False,
            code=ResultCode.ORDER_NOT_FOUND,
            message=order_not_found_message(oid, ctx.locale),
            data={"order_id": oid},
        )
    assert order is not None
    tz = ctx.services.timezone
    ordered = local_date(order.ordered_at, tz)
    owner_ko = f", 플레이어 {order.player_id}" if ctx.actor.is_staff else ""
    owner_en = f", player {order.player_id}" if ctx.actor.is_staff else ""
    msg = ctx.say(
        f"주문 {order.id}: {order.item}, {format_krw(order.amount, 'ko')}, 상태 {status_label(order.status, 'ko')}, "
        f"주문일 {ordered}{owner_ko}.",
        f"Order {order.id}: {order.item}, {format_krw(order.amount, 'en')}, status "
        f"{status_label(order.status, 'en')}, ordered {ordered}{owner_en}.",
    )
    if coupon is not None:
        described = describe_coupon(coupon, ctx.locale, tz)
        msg += ctx.say(
            f" 이 주문에는 {particle(described, '이/가')} 있습니다.", f" This order has {described}."
        )
    else:
        msg += ctx.say(" 이 주문에 발급된 쿠폰은 없습니다.", " No coupon has been issued for this order.")
    return ToolResult(
        ok=True,
        code=ResultCode.OK,
        message=msg,
        data={
            "order": {
                "id": order.id,
                "player_id": order.player_id,
                "item": order.item,
                "amount": order.amount,
                "status": order.status,
                "status_label": ORDER_STATUSES.get(order.status, order.status),
            },
            "coupon": None
            if coupon is None
            else {"code": coupon.code, "amount": coupon.amount, "status": coupon.status},
        },
    )


def _parse_status(raw: str | None) -> str | ValueError | None:
    """Accept a status code (`delayed`) or its Korean label (`배송 지연`); anything else is an error."""
    if raw is None or not raw.strip():
        return None
    text = raw.strip().lower()
    if text in ORDER_STATUSES:
        return text
    squashed = text.replace(" ", "")
    for code, label in ORDER_STATUSES.items():
        if squashed == label.replace(" ", ""):
            return code
    return ValueError(raw)


@tool(
    name="list_my_orders",
    status=Text("주문 목록을 확인하고 있어요", "Checking your orders"),
    player_name=Text("주문 목록", "your order list"),
)
async def list_my_orders(args: ListMyOrdersArgs, ctx: ToolContext) -> ToolResult:
    """List the player's own recent orders (newest first, up to 10) with each order number and status.

    Use this when the player does not know the order number. Optional status filter, e.g. "delayed".
    """
    status = _parse_status(args.status)
    if isinstance(status, ValueError):
        valid = ", ".join(f"{c} ({label})" for c, label in ORDER_STATUSES.items())
        return ToolResult.error(
            ctx.say(
                f"알 수 없는 주문 상태 '{args.status}'입니다. 다음 코드 중 하나를 쓰거나 status 없이 다시 호출하세요: {valid}.",
                f"Unknown order status '{args.status}'. Use one of these codes or call again without status: {valid}.",
            ),
            reason="invalid_status",
        )
    if not ctx.actor.player_id:
        hint = ctx.say(
            " 운영진은 /orders <player_id> 명령을 쓰세요.", " Staff should use /orders <player_id>."
        )
        res = _not_linked(ctx)
        return ToolResult(res.ok, res.code, res.message + (hint if ctx.actor.is_staff else ""), res.data)
    player = ctx.actor.player_id
    try:
        page = await ctx.orders.player_orders(player, limit=LIST_LIMIT, status=status)
    except SourceUnavailable as exc:
        await _audit(ctx, player, ResultCode.SOURCE_UNAVAILABLE, {"why": exc.reason}, "tool:list_my_orders")
        return unavailable_result(ctx.locale)
    orders, total = page.orders, page.total
    if not orders:
        which_ko = f" {status_label(status, 'ko')} 상태의" if status else ""
        which_en = f" {status_label(status, 'en')}" if status else ""
        return ToolResult(
            ok=True,
            code=ResultCode.OK,
            message=ctx.say(
                f"이 플레이어의{which_ko} 주문이 없습니다.", f"The player has no{which_en} orders."
            ),
            data={"orders": []},
        )
    lines = [
        f"- {o.id}: {status_label(o.status, ctx.locale)}, {o.item}, {format_krw(o.amount, ctx.locale)}, "
        + ctx.say(
            f"주문일 {local_date(o.ordered_at, ctx.services.timezone)}",
            f"ordered {local_date(o.ordered_at, ctx.services.timezone)}",
        )
        for o in orders
    ]
    more_ko = f" (전체 {total}건 중 최근 {len(orders)}건)" if total and total > len(orders) else ""
    more_en = f" (the latest {len(orders)} of {total})" if total and total > len(orders) else ""
    head = ctx.say(
        f"최근 주문 {len(orders)}건, 최신순{more_ko}:",
        f"{len(orders)} recent order(s), newest first{more_en}:",
    )
    return ToolResult(
        ok=True,
        code=ResultCode.OK,
        message="\n".join([head, *lines]),
        data={"orders": [{"id": o.id, "status": o.status} for o in orders], "total": total or len(orders)},
    )


async def _audit(
    ctx: ToolContext, order_id: str, code: ResultCode, detail: dict, action: str = "tool:lookup_order"
) -> None:
    await ctx.store.audit(
        actor=ctx.actor.label,
        action=action,
        thread_id=ctx.thread_id,
        target=order_id[:100],
        code=str(code),
        detail=detail,
    )
