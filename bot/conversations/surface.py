"""What a conversation needs from a channel: a `Surface` to post its replies on. Channels implement it;
the `Renderer` streams an answer onto it."""

from __future__ import annotations

from typing import Any, Protocol


class SurfaceError(Exception):
    """A send or edit failed in a way worth retrying (HTTP 5xx, timeout)."""


class SurfaceObserver(Protocol):
    """Told how long every send and edit of a reply took, and whether it failed (the `Renderer` calls it)."""

    def record_edit_latency(self, seconds: float, *, op: str = "edit", ok: bool = True) -> None: ...


class Surface(Protocol):
    """Where a conversation's replies appear (a Discord channel, the console, a replay log)."""

    max_chars: int

    async def send(self, text: str) -> Any:
        """Post a new message; returns a handle for `edit`."""
        ...

    async def edit(self, handle: Any, text: str) -> None:
        """Replace the text of a message this surface sent."""
        ...

    async def react(self, ref: Any, emoji: str) -> None:
        """Add a reaction to the incoming message `ref` (an acknowledgement)."""
        ...
