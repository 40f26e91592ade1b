"""The `escalate_to_staff` tool: records a handoff request (one open per conversation) and tells staff."""

from __future__ import annotations

import logging

from pydantic import BaseModel, Field

from bot.analytics.staff_response import RESOLUTION_ACTIONS
from bot.store.escalations import NewEscalation, escalation_state, open_escalation
from bot.vocabulary.catalogue import Text
from tools.base import ResultCode, ToolContext, ToolResult, tool

log = logging.getLogger(__name__)

MAX_SUMMARY_CHARS = 2_000
"""Staff read the summary in a Discord message; longer text belongs in the thread itself."""


class EscalateArgs(BaseModel):
    summary: str = Field(
        description="What the player needs and what was already tried, for a staff member, e.g. "
        "'ORD… 배송 지연, 보상 한도 초과 요청 — 운영진 판단 필요'."
    )


def _ok(ctx: ToolContext, escalation_id: int, *, notified: bool, replayed: bool) -> ToolResult:
    if replayed:
        message = ctx.say(
            f"이미 운영진에게 연결 요청이 접수되어 있어요 (#{escalation_id}). 새 요청은 만들지 않았습니다. "
            "운영진이 확인 후 이 대화에서 답변드릴 예정이라고 플레이어에게 안내하세요.",
            f"A request for staff is already open (#{escalation_id}); no new one was made. Tell the player "
            "a staff member will follow up in this conversation.",
        )
    else:
        message = ctx.say(
            f"운영진에게 전달했습니다(접수 번호 #{escalation_id}). 운영진이 확인 후 이 대화에서 답변드릴 "
            "예정이라고 플레이어에게 안내하세요.",
            f"Passed to staff (ticket #{escalation_id}). Tell the player a staff member will follow up in this "
            "conversation.",
        )
    away = ctx.services.away_notice(ctx.clock(), ctx.locale) if ctx.services.away_notice else None
    if away:
        message += ctx.say(
            f" 근무 시간 외이므로 이 안내도 그대로 전하세요: {away}", f" Out of hours; also tell them: {away}"
        )
    return ToolResult(
        ok=True,
        code=ResultCode.OK,
        message=message,
        data={
            "escalation_id": escalation_id,
            "notified": notified,
            "replayed": replayed,
            "away_notice": away,
        },
    )


def _already_open(ctx: ToolContext, escalation_id: int) -> ToolResult:
    """The answer while escalation #`escalation_id` is still open: no second ticket, staff notice or SLA
    timer; `replayed` tells the desk's "상담원 연결" path to say so to the player."""
    return _ok(ctx, escalation_id, notified=False, replayed=True)


@tool(
    name="escalate_to_staff",
    side_effect=True,
    allowed_unlinked=True,
    status=Text("담당자에게 연결하고 있어요", "Connecting you with our staff"),
    player_name=Text("운영진", "our staff"),
)
async def escalate_to_staff(args: EscalateArgs, ctx: ToolContext) -> ToolResult:
    """Hand the conversation to a human staff member with a short summary, e.g. when the player asks for a person,
    the request is outside policy, or a tool keeps refusing. Available to every user, linked or not.
    """
    summary = args.summary.strip()
    if not summary:
        return ToolResult.error(
            ctx.say(
                "summary가 비어 있습니다. 플레이어의 요청과 지금까지의 상황을 한두 문장으로 적어 다시 호출하세요.",
                "The summary is empty. Call again with one or two sentences on what the player needs.",
            ),
            reason="empty_summary",
        )
    if len(summary) > MAX_SUMMARY_CHARS:
        return ToolResult.error(
            ctx.say(
                f"summary가 너무 깁니다({len(summary):,}자). {MAX_SUMMARY_CHARS:,}자 이내로 줄여 다시 호출하세요.",
                f"The summary is too long ({len(summary):,} characters). Shorten it to at most "
                f"{MAX_SUMMARY_CHARS:,} and call again.",
            ),
            reason="summary_too_long",
        )
    # One open escalation per conversation, whatever asked for it (this tool, "상담원 연결", the person
    # button): while the thread's newest escalation is open, a call answers with it. The row's key names
    # the escalation it follows, so calls racing from any path (and any process) insert exactly one.
    state = await escalation_state(ctx.store, ctx.thread_id, ending_actions=RESOLUTION_ACTIONS)
    if state.open and state.latest is not None:
        return _already_open(ctx, state.latest)
    key = f"{ctx.thread_id}:escalation-after-{state.latest or 0}"
    row, made = await open_escalation(
        ctx.store,
        NewEscalation(
            thread_id=ctx.thread_id,
            player_id=ctx.actor.player_id,
            discord_id=ctx.actor.discord_id,
            summary=summary,
            idempotency_key=key,
            created_at=ctx.clock(),
            actor=ctx.actor.label,
        ),
        audit_code=str(ResultCode.OK),
    )
    if not made:  # another call on this conversation ran concurrently and won: answer with its record
        return _already_open(ctx, row.id)
    notified = False
    notify = ctx.services.notify_staff
    if notify is not None:
        try:
            await notify(
                "escalation",
                {
                    "escalation_id": row.id,
                    "thread_id": ctx.thread_id,
                    "player_id": ctx.actor.player_id,
                    "discord_id": ctx.actor.discord_id,
                    "actor": ctx.actor.label,
                    "summary": summary,
                },
            )
            notified = True
        except Exception:  # the record is already committed; staff can still find it with /audit
            log.exception("escalation %s: staff notification failed", row.id)
            await ctx.store.audit(
                actor=ctx.actor.label,
                action="escalate.notify_failed",
                thread_id=ctx.thread_id,
                target=f"escalation:{row.id}",
                code=str(ResultCode.ERROR),
            )
    return _ok(ctx, row.id, notified=notified, replayed=False)
