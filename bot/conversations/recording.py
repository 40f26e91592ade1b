"""`RecordingSurface`: a channel surface that keeps what a person would see (replay, demo checks, tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.conversations.surface import ChannelTraits, SurfaceBase


@dataclass
class RecordingSurface(SurfaceBase):
    """Messages by handle (after edits; the status line too), reactions on incoming messages, ephemeral
    replies, and which handles show a status line."""

    max_chars: int = 2000
    messages: dict[int, str] = field(default_factory=dict)
    reactions: list[tuple[Any, str]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    statuses: set[int] = field(default_factory=set)
    """Handles whose message shows a status line now (not answer text)."""
    run_ids: list[str] = field(default_factory=list)
    """The runs that replied here, in order."""

    @property
    def traits(self) -> ChannelTraits:  # type: ignore[override]
        return ChannelTraits(max_chars=self.max_chars)

    async def start_run(self, run_id: str) -> None:
        self.run_ids.append(run_id)

    async def status(self, text: str, handle: Any | None) -> int:
        if handle is None:
            handle = len(self.messages)
        self.messages[handle] = text
        self.statuses.add(handle)
        return handle

    async def send(self, text: str) -> int:
        handle = len(self.messages)
        self.messages[handle] = text
        return handle

    async def edit(self, handle: Any, text: str) -> None:
        self.messages[handle] = text
        self.statuses.discard(handle)

    async def react(self, ref: Any, emoji: str) -> None:
        self.reactions.append((ref, emoji))

    async def ephemeral(self, text: str) -> None:
        self.replies.append(text)

    @property
    def text(self) -> str:
        """The channel messages, in order."""
        return "\n".join(self.messages.values())

    @property
    def all_text(self) -> str:
        """Channel messages and the ephemeral replies."""
        return "\n".join([*self.messages.values(), *self.replies])
