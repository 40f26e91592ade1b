"""`RecordingSurface`: a channel surface that keeps what a person would see (replay, demo checks, tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RecordingSurface:
    """Messages by handle (after edits), reactions on incoming messages, ephemeral replies."""

    max_chars: int = 2000
    messages: dict[int, str] = field(default_factory=dict)
    reactions: list[tuple[Any, str]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)

    async def send(self, text: str) -> int:
        handle = len(self.messages)
        self.messages[handle] = text
        return handle

    async def edit(self, handle: Any, text: str) -> None:
        self.messages[handle] = text

    async def react(self, ref: Any, emoji: str) -> None:
        self.reactions.append((ref, emoji))

    async def send_ephemeral(self, text: str) -> None:
        self.replies.append(text)

    @property
    def text(self) -> str:
        """The channel messages, in order."""
        return "\n".join(self.messages.values())

    @property
    def all_text(self) -> str:
        """Channel messages and the ephemeral replies."""
        return "\n".join([*self.messages.values(), *self.replies])
