"""The `incident_status` tool: the current state of the open incidents that concern the player (the
notice staff keep up to date, since when, and the player's own incident compensation), so every
conversation answers a flood of the same question with the same facts."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bot.incidents.notice import open_incidents
from bot.store import Coupon
from bot.store.coupon_lookups import incident_coupons
from bot.vocabulary.catalogue import Text
from tools.base import ResultCode, ToolContext, ToolResult, tool
from tools.money import format_krw


class IncidentStatusArgs(BaseModel):
    incident_id: int | None = Field(
        default=None, description="One incident's number, e.g. 3; leave empty for every open incident."
    )


async def _own_coupons(ctx: ToolContext, incident_id: int) -> list[Coupon]:
    if not ctx.actor.player_id:
        return []
    return await incident_coupons(ctx.store, ctx.actor.player_id, incident_id)


@tool(
    name="incident_status",
    allowed_unlinked=True,
    status=Text("진행 중인 장애 공지를 확인하고 있어요", "Checking the current incident notice"),
    player_name=Text("장애 공지", "our incident notices"),
    argument_words={"incident_id": Text("장애 번호", "incident number")},
    counts_as=("search_policy",),  # the open incident's official notice grounds a question about it
)
async def incident_status(args: IncidentStatusArgs, ctx: ToolContext) -> ToolResult:
    """The latest official notice of an ongoing incident (server outage, extended maintenance, mass
    delivery delay) that affects this player, and the compensation coupon the player got for it, if any.
    Call it when the player asks about an outage, maintenance or a late order, e.g. "서버 언제 열려요?";
    answer with its facts only. Available to every user, linked or not."""
    found = await open_incidents(ctx.store, ctx.actor.player_id)
    if args.incident_id is not None:
        found = [i for i in found if i.id == args.incident_id]
    if not found:
        message = ctx.say(
            "지금 이 플레이어에게 해당하는 진행 중인 장애 공지는 없습니다.",
            "There is no ongoing incident notice for this player right now.",
        )
        return ToolResult(True, ResultCode.OK, message, {"incidents": []})
    lines, views = [], []
    for i in found:
        since = i.started_at.strftime("%Y-%m-%d %H:%M UTC")
        lines.append(
            ctx.say(
                f"장애 #{i.id} {i.title} ({since}부터, 공지 v{i.notice_version}): {i.notice('ko')}",
                f"Incident #{i.id} {i.title} (since {since}, notice v{i.notice_version}): {i.notice('en')}",
            )
        )
        coupons = await _own_coupons(ctx, i.id)
        for c in coupons:
            amount = format_krw(c.amount, ctx.locale)
            lines.append(
                ctx.say(
                    f"- 이 장애 보상: {c.order_id}에 {amount} 쿠폰 {c.code} (상태 {c.status})",
                    f"- Compensation for it: a {amount} coupon {c.code} on {c.order_id} ({c.status})",
                )
            )
        views.append(
            {
                "id": i.id,
                "title": i.title,
                "notice_version": i.notice_version,
                "coupons": [{"order_id": c.order_id, "amount": c.amount, "code": c.code} for c in coupons],
            }
        )
    return ToolResult(True, ResultCode.OK, "\n".join(lines), {"incidents": views})
