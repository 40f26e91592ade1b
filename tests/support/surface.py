"""The one recording surface of the tests: the channel surface replay and demo checks use
(`bot.conversations.recording.RecordingSurface`), plus what a channel test needs to see and break — when each
send and edit happened on a clock, a limit on message length, and edits that fail."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.conversations.recording import RecordingSurface as _Recording
from bot.conversations.surface import SurfaceError


@dataclass
class RecordingSurface(_Recording):
    """Messages by handle (after edits), reactions, ephemeral replies; `sends` and `edits` as (time, handle,
    text) when a clock is given. `fail_edits` makes that many edits fail, `fail_all_edits` every one (an
    edit endpoint outage); `edit_attempts` counts edits, failed or not."""

    clock: Callable[[], float] | None = None
    fail_edits: int = 0
    fail_all_edits: bool = False
    check_length: bool = False
    """Assert that nothing longer than `max_chars` is sent (the renderer must split first)."""
    sends: list[tuple[float, int, str]] = field(default_factory=list)
    edits: list[tuple[float, int, str]] = field(default_factory=list)
    edit_attempts: int = 0

    def _now(self) -> float:
        return self.clock() if self.clock is not None else 0.0

    async def status(self, text: str, handle: Any | None) -> int:
        """A status line is a message like any other on a channel: a new one is a send, else an edit."""
        new = handle is None
        handle = await super().status(text, handle)
        (self.sends if new else self.edits).append((self._now(), handle, text))
        return handle

    async def send(self, text: str) -> int:
        assert not self.check_length or len(text) <= self.max_chars
        handle = await super().send(text)
        self.sends.append((self._now(), handle, text))
        return handle

    async def edit(self, handle: Any, text: str) -> None:
        assert not self.check_length or len(text) <= self.max_chars
        self.edit_attempts += 1
        if self.fail_all_edits or self.fail_edits > 0:
            self.fail_edits -= 1
            raise SurfaceError("HTTP 500")
        await super().edit(handle, text)
        self.edits.append((self._now(), handle, text))
