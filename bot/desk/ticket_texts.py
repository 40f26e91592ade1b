"""What a ticket thread is called and what the bot says around it (Korean first): the thread's name
from the player and their first message (no mentions, no markdown), the pointer to an open ticket, the
notices when staff join and when the ticket closes."""

from __future__ import annotations

import re

from bot.vocabulary.catalogue import say

NAME_LIMIT = 100
"""Discord's limit for a thread name."""
TOPIC_CHARS = 40

_MENTION = re.compile(r"<(?:@[!&]?|#|a?:\w+:)\d+>|@(?:everyone|here)\b", re.IGNORECASE)
_URL = re.compile(r"https?://\S+", re.IGNORECASE)
_MARKUP = re.compile(r"[*_~`|>#\[\]()<>\\@]")


def plain(text: str) -> str:
    """One line with no mention, link or markdown character left (what a thread name may carry)."""
    text = _URL.sub(" ", _MENTION.sub(" ", text))
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return " ".join(_MARKUP.sub(" ", text).split())


def ticket_topic(first_message: str) -> str:
    """The first message, cleaned and cut to a short topic at a word boundary."""
    topic = plain(first_message)
    if len(topic) <= TOPIC_CHARS:
        return topic
    cut = topic[:TOPIC_CHARS].rsplit(" ", 1)[0] or topic[:TOPIC_CHARS]
    return cut.rstrip() + "…"


def ticket_name(player: str, topic: str, locale: str) -> str:
    """`루나 · 환불 문의` — the player's name and the topic, within Discord's 100 characters."""
    who = plain(player)[:40] or say(locale, "플레이어", "player")
    what = topic or say(locale, "문의", "question")
    return f"{who} · {what}"[:NAME_LIMIT]


def opened_pointer(locale: str, thread_id: int) -> str:
    """Said in the ticket channel when a ticket opens (only the player and staff can open the link)."""
    return say(
        locale,
        f"상담 스레드를 열었어요: <#{thread_id}> 여기서 이어서 답변드릴게요.",
        f"I opened a private ticket for you: <#{thread_id}> — I will answer there.",
    )


def opening_line(locale: str, player: str, first_message: str) -> str:
    """The ticket's first message: who it is for and what they asked (quoted, markdown escaped)."""
    quoted = plain(first_message)[:300]
    return say(
        locale,
        f"{plain(player)} 님의 상담입니다. 이 스레드는 본인과 상담팀만 볼 수 있어요.\n> {quoted}",
        f"Ticket for {plain(player)}. Only you and the support team can see this thread.\n> {quoted}",
    )


def redirect_to_open(locale: str, thread_id: int) -> str:
    """Said to a player who writes in the ticket channel while their ticket is open."""
    return say(
        locale,
        f"이미 열린 상담이 있어요. <#{thread_id}> 에서 이어서 말씀해 주세요.",
        f"You already have an open ticket: <#{thread_id}> — please continue there.",
    )


def staff_joined(locale: str) -> str:
    return say(
        locale,
        "상담팀을 이 스레드에 불렀어요. 담당자가 곧 확인할 거예요.",
        "I have brought the support team into this thread; a person will look at it soon.",
    )


def closed_notice(locale: str) -> str:
    return say(
        locale,
        "한동안 대화가 없어 이 상담을 닫습니다. 도움이 더 필요하면 채널에 다시 글을 남겨 주세요.",
        "This ticket is closed as it has been quiet for a while. Write in the channel again any time.",
    )
