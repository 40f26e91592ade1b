"""The `issue_coupon` tool: the model's only way to compensate a player; every guard lives in the ledger call."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bot.vocabulary.catalogue import ORDER_NUMBER, Text
from tools.base import ToolContext, ToolResult, tool
from tools.coupon_rules import CouponRules, CouponRulesError, load_coupon_rules
from tools.ledger import issue_for_player

__all__ = ["CouponRules", "CouponRulesError", "IssueCouponArgs", "issue_coupon", "load_coupon_rules"]


class IssueCouponArgs(BaseModel):
    # Types only: ranges are the guard's job, so the model gets a reason it can act on, not a schema error.
    order_id: str = Field(description="The order to compensate, as the player wrote it, e.g. ORD….")
    amount: int = Field(description="Coupon amount in KRW as a whole number, e.g. 5000.")
    reason: str | None = Field(default=None, description="Short reason, e.g. '배송 지연 보상'.")


@tool(
    name="issue_coupon",
    side_effect=True,
    status=Text("보상 쿠폰을 확인하고 있어요", "Checking your compensation coupon"),
    player_name=Text("쿠폰 발급", "coupon issuance"),
    argument_words={"order_id": ORDER_NUMBER},
    coupon_outcome=True,
    counts_as=("lookup_order",),
)
async def issue_coupon(args: IssueCouponArgs, ctx: ToolContext) -> ToolResult:
    """Issue a compensation coupon (KRW) for one of the player's own orders, e.g. order_id "ORD…", amount 5000.

    Only delayed orders qualify, amounts have a per-coupon limit, one coupon per order, and daily caps apply.
    A refusal explains why and what would be valid: read it and retry with a valid amount or explain to the
    player. Never tell the player a coupon was issued unless this tool returned ISSUED.
    """
    return await issue_for_player(
        ctx.store,
        ctx.services.coupon_rules,
        actor=ctx.actor,
        order_id=args.order_id,
        amount=args.amount,
        reason=args.reason,
        idempotency_key=ctx.idempotency_key,
        thread_id=ctx.thread_id,
        locale=ctx.locale,
        now=ctx.clock(),
        timezone=ctx.services.timezone,
        notify=ctx.services.notify_staff,
        review=ctx.trust.untrusted,
        orders=ctx.orders,
    )
