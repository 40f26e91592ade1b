"""Auto-close: an escalated conversation the player has not written in for `ARCA_ESCALATION_IDLE_CLOSE_HOURS`
is closed with a notice in their language that asks for a 👍 / 👎, and the closing is audited
(`escalation.closed`), which is also how a restarted process knows it was done."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from bot.analytics.staff_response import escalation_timings
from bot.store import Store, audit_views, conversation_views
from bot.store.desk_claims import claim
from bot.store.escalations import CLOSED_ACTION
from bot.vocabulary.catalogue import say
from bot.vocabulary.language import detect_language

CLOSE_ACTION = CLOSED_ACTION
LOOKBACK = timedelta(days=30)
"""Escalations older than this are left alone (they were closed, or the thread moved on long ago)."""

Tell = Callable[[str, str], Awaitable[object]]
"""`await tell(thread_id, text)`: post into the player's conversation (and keep it in its memory)."""


def closing_notice(locale: str) -> str:
    return say(
        locale,
        "답장이 없어 이 상담을 종료합니다. 도움이 더 필요하면 언제든 다시 말씀해 주세요. "
        "상담이 도움이 되었나요? 👍 / 👎 로 알려 주세요.",
        "As we have not heard back, this conversation with staff is now closed; write again any time. "
        "Did we help? Let us know with 👍 / 👎.",
    )


async def latest_run(store: Store, thread_id: str) -> str | None:
    """The conversation's latest answer: what the closing notice's 👍 / 👎 rate."""
    return await conversation_views.latest_run(store, thread_id)


async def closed_escalations(store: Store) -> set[str]:
    """The `escalation:N` targets already closed."""
    return await audit_views.targets_of(store, CLOSE_ACTION)


async def idle_escalations(store: Store, now: datetime, idle: timedelta) -> list[tuple[int, str, str]]:
    """(escalation id, thread id, locale) of open escalations whose player has been silent for `idle`."""
    closed = await closed_escalations(store)
    due: list[tuple[int, str, str]] = []
    for t in await escalation_timings(
        store, since=now - LOOKBACK, until=now - idle + timedelta(microseconds=1)
    ):
        if t.thread_id is None or t.resolved_at is not None or f"escalation:{t.escalation_id}" in closed:
            continue
        last = await conversation_views.last_player_message(store, t.thread_id)
        spoke = max(last.at, t.created_at) if last is not None else t.created_at
        if now - spoke >= idle:
            due.append((t.escalation_id, t.thread_id, detect_language(last.content) if last else "ko"))
    return due


async def close_idle(
    store: Store,
    tell: Tell,
    now: datetime,
    idle: timedelta,
    *,
    by: str = "desk",
    owns: Callable[[str], bool] | None = None,
) -> list[int]:
    """Close every idle escalation once across processes (a `close:<id>` claim): audit it, then tell the
    player. `owns` picks the conversations this process can post into (others are left to theirs).
    Returns the ids closed."""
    closed: list[int] = []
    for escalation_id, thread_id, locale in await idle_escalations(store, now, idle):
        if owns is not None and not owns(thread_id):
            continue
        if not await claim(store, f"close:{escalation_id}", by=by, now=now):
            continue  # another process closed it
        await store.audit(
            actor="desk", action=CLOSE_ACTION, thread_id=thread_id, target=f"escalation:{escalation_id}"
        )
        await tell(thread_id, closing_notice(locale))
        closed.append(escalation_id)
    return closed
