"""The staff channel (`ARCA_STAFF_CHANNEL`): escalations, coupon approval requests, SLA reminders and the
game's refused grants, each posted as a card (the last part carries Take over or Approve / Reject), no
mention ever pinged. The one Discord client (`bot.serving.discord_client`) registers `StaffChannel.post`
as a staff sink of `Conversations`."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any

import discord

from bot.conversations.renderer import DISCORD_LIMIT, split_message
from bot.discord_kit.posting import NO_MENTIONS
from bot.staffroom.discord_staff.buttons import staff_notice_view
from bot.vocabulary import ThreadId
from tools.coupon_staff import approval_reason

if TYPE_CHECKING:
    from bot.config import Settings

log = logging.getLogger(__name__)


def _where(thread_id: str | None) -> str:
    if not thread_id:
        return "?"
    tid = ThreadId(thread_id)
    if tid.snowflake is None:
        return thread_id
    return f"<#{tid.snowflake}>" if tid.kind == "discord" else f"DM <@{tid.snowflake}>"


def _discord_time(stamp: str | None) -> str:
    """An ISO time as Discord's timestamp markup (`<t:…:f>`), which each reader's client shows in their own
    time zone and language ("2026년 3월 3일 오후 2:05" / "March 3, 2026 2:05 PM"); never the raw stamp."""
    if not stamp:
        return "?"
    try:
        return discord.utils.format_dt(datetime.fromisoformat(stamp), "f")
    except ValueError:
        return "?"


def format_staff_notice(kind: str, payload: dict[str, Any]) -> str:
    """The staff-channel post for an escalation or an approval request (mentions are never pinged)."""
    where = _where(payload.get("thread_id"))
    if kind == "escalation":
        who = payload.get("player_id") or "미연동 / unlinked"
        return (
            f"📣 **운영진 호출 / Escalation #{payload.get('escalation_id', '?')}** · {where} · "
            f"player {who} (discord {payload.get('discord_id') or '-'})\n"
            f"> {str(payload.get('summary') or '').strip()}\n"
            f"이어받기 / take over: `/handoff` in {where}"
        )
    if kind == "approval":
        amount = payload.get("amount")
        shown = f"{amount:,}원" if isinstance(amount, int) else str(amount)
        reason = f" · 사유 / reason: {payload['reason']}" if payload.get("reason") else ""
        flagged = (
            "\n⚠️ 봇에게 지시하거나 권한을 주장한 메시지의 요청입니다 / asked in a message that tried to instruct "
            "the bot or claimed authority"
            if payload.get("flagged")
            else ""
        )
        threshold = (payload.get("why") or {}).get("threshold")
        if not payload.get("flagged") and isinstance(threshold, int) and isinstance(amount, int):
            why = [approval_reason({"threshold": threshold}, amount, lang) for lang in ("ko", "en")]
            flagged = "\n⚖️ " + " / ".join(why)
        return (
            f"🧾 **쿠폰 승인 요청 / Coupon approval** · {payload.get('order_id')} · {shown} · "
            f"player {payload.get('player_id') or '-'} · {where}{reason}{flagged}\n"
            f"승인 / approve: `/coupon approve {payload.get('order_id')}`"
        )
    if kind == "sla":
        what = (
            "첫 응답 / first response" if payload.get("target") == "first_response" else "해결 / resolution"
        )
        left = int(payload.get("minutes_left") or 0)
        when = f"{left}분 남음 / {left} min left" if left > 0 else f"{-left}분 지남 / {-left} min overdue"
        return (
            f"⏰ **SLA · Escalation #{payload.get('escalation_id', '?')}** · {where} · {what} 목표 / target "
            f"{_discord_time(payload.get('due_at'))} · {when}"
        )
    if kind == "delivery_dead":
        shown = ", ".join(f"`{g}`" for g in payload.get("grant_ids") or [])
        return (
            f"🎁 **게임 지급 실패 / Grants refused by the game** · 새로 {payload.get('new')}건 / new, "
            f"실패 전체 {payload.get('dead_total')}건 / dead in all · {shown}\n"
            f"> {str(payload.get('last_error') or '').strip()}\n"
            "원인을 고친 뒤 콘솔의 게임 지급에서 다시 보내기 / fix the cause, then Retry in the console's "
            "Game grants (or `arca-bot deliveries retry GRANT_ID`)"
        )
    details = ", ".join(f"{k}={v}" for k, v in payload.items())
    return f"📣 {kind}: {details}"


class StaffChannel:
    """Posts the staff notices of one Discord client into the staff channel."""

    def __init__(self, client: discord.Client, settings: Settings) -> None:
        self.client = client
        self.settings = settings

    async def post(self, kind: str, payload: dict[str, Any]) -> None:
        """Staff sink: escalations and approval requests go to `ARCA_STAFF_CHANNEL`."""
        channel_id = self.settings.staff_channel
        if channel_id is None:
            log.warning("%s not posted: ARCA_STAFF_CHANNEL is not set", kind)
            return
        if kind == "handoff" and payload.get("on_card"):
            return  # Take over was pressed on a card: that card is edited instead
        channel = self.client.get_channel(channel_id) or await self.client.fetch_channel(channel_id)
        if not isinstance(channel, discord.abc.Messageable):
            log.error("ARCA_STAFF_CHANNEL %s is not a text channel", channel_id)
            return
        chunks = split_message(format_staff_notice(kind, payload), DISCORD_LIMIT)
        for i, chunk in enumerate(chunks):
            view = staff_notice_view(kind, payload) if i == len(chunks) - 1 else None
            await channel.send(chunk, allowed_mentions=NO_MENTIONS, **({"view": view} if view else {}))
