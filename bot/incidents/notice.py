"""The open incidents' notices a conversation must carry: pinned into the run's messages (never
compacted away) and read afresh at every run, so an update takes effect at once. The fact check may
treat these texts as backed (`open_notices`)."""

from __future__ import annotations

from bot.store import Store
from bot.store.incident_records import IncidentRecord

NOTICE_HEAD = "[INCIDENT NOTICE]"


async def open_incidents(store: Store, player_id: str | None) -> list[IncidentRecord]:
    """The open incidents whose scope covers this player (an unlinked actor: those for all players)."""
    return await store.incidents.open_for(player_id)


async def open_notices(store: Store, player_id: str | None, locale: str = "ko") -> list[str]:
    """The current notice text of each open incident that concerns `player_id`, in `locale`."""
    return [i.notice(locale) for i in await open_incidents(store, player_id)]


def pinned_notice(incidents: list[IncidentRecord], locale: str) -> str | None:
    """The one system message that carries every open notice for this run (None when there is none)."""
    if not incidents:
        return None
    lines = [
        f"{NOTICE_HEAD} 진행 중인 장애 공지입니다. 관련 질문에는 이 공지의 사실만 안내하세요 "
        "(Answer questions about it with these facts only; call incident_status for the latest state):"
    ]
    for i in incidents:
        lines.append(f"- #{i.id} {i.title} (v{i.notice_version}): {i.notice(locale)}")
    return "\n".join(lines)
