"""What a conversation needs from a channel: a `Surface` to show its replies on, with one typed call per
kind of thing shown (a status line, answer text, a notice, an ephemeral reply, an acknowledgement), and
the `ChannelTraits` the channel declares. The `Renderer` streams an answer onto it.

A channel learns what a text is from the call that carries it, never from the text: no glyph is parsed,
and every call exists on every surface (`SurfaceBase` gives the defaults), so nothing is probed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Protocol


class SurfaceError(Exception):
    """A send or edit failed in a way worth retrying (HTTP 5xx, timeout)."""


@dataclass(frozen=True)
class ChannelTraits:
    """What a channel declares about itself; the run and the `Renderer` read it, never guess it."""

    max_chars: int = 2000
    """The longest message the channel shows; a longer answer continues in a new message."""
    edit_interval: float | None = None
    """Seconds between two edits of one message; None: the conversation's pace (`ARCA_EDIT_INTERVAL`)."""
    buttons: bool = False
    """Messages can carry buttons (👍 / 👎, "talk to a person")."""
    ephemeral: bool = False
    """An ephemeral reply reaches only the person who asked (elsewhere it is shown like a notice)."""
    deletes: bool = False
    """A message no longer part of the answer can be deleted (elsewhere it is blanked to "…")."""


class Surface(Protocol):
    """Where a conversation's replies appear (a Discord channel, the console, the web stream, a replay log).

    The `Renderer` lays an answer out in messages: `status` shows the status line in the reply's first
    message, `send` / `edit` carry answer text only. Replies that are not a run's answer go through
    `notice` (shown to the channel) or `ephemeral` (shown to the asker).
    """

    traits: ChannelTraits

    async def start_run(self, run_id: str) -> None:
        """A run begins replying here; what follows, up to the next `start_run`, is its reply."""
        ...

    async def on_event(self, event: Any) -> None:
        """One engine event of the run replying here (the web shows the steps; most channels ignore it)."""
        ...

    async def status(self, text: str, handle: Any | None) -> Any:
        """Show the status line `text`: a new message when `handle` is None, else an edit of the status
        message `handle`. Returns the message's handle (answer text may later replace it by `edit`)."""
        ...

    async def send(self, text: str) -> Any:
        """Post a new message of answer text; returns a handle for `edit`."""
        ...

    async def edit(self, handle: Any, text: str) -> None:
        """Replace the text of a message this surface sent with answer text."""
        ...

    async def delete(self, handle: Any) -> None:
        """Take away a message that is no longer part of the answer (blank it where deleting is not possible)."""
        ...

    async def notice(self, text: str) -> None:
        """A whole reply that is not a streamed answer: a refusal, a failure, a stop, an escalation's reply."""
        ...

    async def ephemeral(self, text: str) -> None:
        """A reply only the asker sees (staff command replies) where the channel can (`traits.ephemeral`)."""
        ...

    async def react(self, ref: Any, emoji: str) -> None:
        """Add a reaction to the incoming message `ref` (an acknowledgement)."""
        ...

    def end_turn(self) -> None:
        """Everything for the message being handled has been shown (the console ends its line)."""
        ...


class SurfaceBase(ABC):
    """The defaults of a `Surface` for channels that show replies as messages they send and edit: a status
    line is a message like any other, a notice and an ephemeral reply are new messages, a stale message is
    blanked, and run starts and engine events are not shown. Subclasses implement `send` and `edit`."""

    traits: ChannelTraits = ChannelTraits()

    async def start_run(self, run_id: str) -> None:
        return None

    async def on_event(self, event: Any) -> None:
        return None

    async def status(self, text: str, handle: Any | None) -> Any:
        if handle is None:
            return await self.send(text)
        await self.edit(handle, text)
        return handle

    @abstractmethod
    async def send(self, text: str) -> Any: ...

    @abstractmethod
    async def edit(self, handle: Any, text: str) -> None: ...

    async def delete(self, handle: Any) -> None:
        await self.edit(handle, "…")

    async def notice(self, text: str) -> None:
        await self.send(text)

    async def ephemeral(self, text: str) -> None:
        await self.notice(text)

    async def react(self, ref: Any, emoji: str) -> None:
        return None

    def end_turn(self) -> None:
        return None
