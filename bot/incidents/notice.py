"""The open incidents' notices a conversation must carry: pinned into the run's messages (never
compacted away) and read afresh at every run, so an update takes effect at once. The fact check may
treat these texts as backed (`open_notices`)."""

from __future__ import annotations

from bot.store import Store
from bot.store.incidents import IncidentRecord

NOTICE_HEAD = "[INCIDENT NOTICE]"
NOTICE_SEPARATOR = "||"
"""Between the Korean and the English notice in one line of text (`/incident open|update`)."""


def split_notice(text: str) -> tuple[str, str]:
    """`한국어 공지 || English notice` → (ko, en); the English part is optional.

    The *last* separator splits, so a Korean notice may itself hold `||` (`A || B || ` keeps `A || B`
    whole); the English part is the one that may not (the console refuses it there)."""
    if NOTICE_SEPARATOR not in text:
        return text.strip(), ""
    ko, _, en = text.rpartition(NOTICE_SEPARATOR)
    return ko.strip(), en.strip()


def join_notice(ko: str, en: str) -> str:
    """The one line `split_notice` reads back as exactly (ko, en), whatever `ko` holds."""
    return f"{ko.strip()} {NOTICE_SEPARATOR} {en.strip()}".rstrip()


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
