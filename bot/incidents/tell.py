"""Telling each conversation that asked about an incident (it called `incident_status`, or its answer
relayed the pinned notice) what its compensation gave it: amount, coupon code and expiry, in the player's
language, through the staff outbox (posted by whichever channel process owns the thread), once per
conversation across restarts and processes (a unique delivery row committed with the outbox row)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from bot.store import Store
from bot.store.incident_deliveries import GrantedCoupon
from bot.vocabulary.dates import day_text

STATUS_TOOL = "incident_status"
"""A run that called this tool during the incident asked about it; so did one whose answer relayed the
incident's pinned notice (recorded with the run, `bot.guards.notice_use`)."""


def _when(granted: GrantedCoupon, zone: ZoneInfo, locale: str) -> str:
    """The last day the coupon works, as the player reads it (`2026년 4월 1일(수)`, `Wed Apr 1, 2026`)."""
    return day_text(granted.expires_at, locale, zone, year=True) if granted.expires_at else "-"


def compensation_message(title: str, coupons: list[GrantedCoupon], locale: str, zone: ZoneInfo) -> str:
    if locale == "en":
        lines = [f"Compensation for “{title}” has been issued to you:"]
        for c in coupons:
            where = f"order {c.order_id}: " if c.order_id else ""
            lines.append(
                f"- {where}{c.amount:,} KRW coupon, code {c.code}, valid until {_when(c, zone, locale)}"
            )
        return "\n".join(lines)
    lines = [f"「{title}」 장애 보상으로 쿠폰이 발급되었습니다:"]
    for c in coupons:
        where = f"주문 {c.order_id}: " if c.order_id else ""
        lines.append(
            f"- {where}{c.amount:,}원 쿠폰, 쿠폰 코드 {c.code}, {_when(c, zone, locale)}까지 사용 가능"
        )
    return "\n".join(lines)


async def tell_compensated(store: Store, incident_id: int, *, timezone: str = "Asia/Seoul") -> int:
    """Queue the message for every conversation that asked about the incident and got coupons from it,
    unless it was told already; returns how many were queued now."""
    incident = await store.incidents.get(incident_id)
    if incident is None:
        return 0
    deliveries = store.incidents.deliveries
    told = await deliveries.told(incident_id)
    zone = ZoneInfo(timezone)
    queued = 0
    for asker in await deliveries.askers(incident_id, STATUS_TOOL, incident.started_at, incident.ended_at):
        if asker.thread_id in told:
            continue
        coupons = await deliveries.granted(incident_id, asker.player_id)
        if not coupons:
            continue
        text = compensation_message(incident.title, coupons, asker.locale, zone)
        if await deliveries.tell(incident_id, asker.thread_id, asker.player_id, text):
            queued += 1
            told.add(asker.thread_id)
    return queued
