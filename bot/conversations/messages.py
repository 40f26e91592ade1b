"""What flows between a channel and `Conversations`: an incoming message and what was done with it (thread
ids are `bot.vocabulary.ThreadId`, the conversation's language `bot.vocabulary.detect_language`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from bot.attachments import StoredAttachment, Upload
from bot.engine.results import AgentResult
from bot.guards.input import InputVerdict
from tools.base import Actor

ACK_EMOJI = "👀"
STOPPED_TEXT = "⏹ 진행 중이던 답변을 중단했습니다. (stopped)"
"""What the channel shows when staff (or the player's Ctrl-C) stop a run."""


@dataclass
class Incoming:
    """One message from a channel."""

    thread_id: str
    actor: Actor
    text: str
    ref: Any = None
    """The channel's handle of the incoming message (for the 👀 acknowledgement)."""
    untrusted: bool = False
    """The input guard's verdict on `text` (instructions or claimed authority), judged once on arrival."""
    verdict: InputVerdict | None = None
    """The input guard's verdict when the channel already judged `text` (the web answers an oversized
    message with its own 413 shape); `Conversations.handle` judges every other message, once."""
    attachments: list[Upload | StoredAttachment] = field(default_factory=list)
    """Files sent with the message: a channel's `Upload`s, or files the web route already checked and kept."""
    images: list[StoredAttachment] = field(default_factory=list)
    """The kept screenshots (set by `Conversations.handle`): image parts for a model that declares `vision`."""


@dataclass
class TurnOutcome:
    """What `handle` did with a message."""

    kind: Literal["answered", "queued", "refused", "command", "paused", "stopped", "failed", "escalated"]
    answer: str | None = None
    runs: list[AgentResult] = field(default_factory=list)
    reply: Any = None
    """The `StaffReply` for a command."""
    refusal_code: str | None = None


def failure_text(locale: str) -> str:
    if locale == "ko":
        return (
            "죄송합니다. 지금 답변을 만드는 중 문제가 생겼습니다. 보내주신 메시지는 저장되어 있으니 "
            "잠시 후 다시 말씀해 주세요."
        )
    return "Sorry, something went wrong while answering. Your message is saved; please try again in a moment."
