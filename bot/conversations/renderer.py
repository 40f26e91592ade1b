"""The renderer shared by every channel: a status line from tool progress, then the answer streamed
by editing messages — at most one edit per `edit_interval` per message, continued in a new message
past the surface's length limit, and a final edit that always lands.

Channels implement the `Surface` protocol: the status line goes out by `status`, answer text by `send`
and `edit`, so a channel never has to tell them apart by their text. Nothing here knows Discord.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bot.conversations.hooks import SurfaceCall
from bot.conversations.surface import Surface, SurfaceError
from bot.vocabulary.catalogue import WORKING
from tools.base import ToolRegistry

log = logging.getLogger(__name__)

DISCORD_LIMIT = 2000


def status_text(tool_name: str | None, locale: str, tools: ToolRegistry | None = None) -> str:
    """The status line while `tool_name` runs: the tool declares its own (see `tools.base.tool`)."""
    return f"⏳ {tools.status_line(tool_name, locale) if tools is not None else WORKING(locale)}"


def _fence_open_at(text: str, upto: int) -> bool:
    """True when position `upto` lies inside a ``` code block of `text`."""
    return text.count("```", 0, upto) % 2 == 1


@dataclass(frozen=True)
class _Piece:
    end: int
    """Offset in the source text just after this piece."""
    text: str
    """The rendered chunk (fences closed/reopened where a code block had to be cut)."""
    reopen: str
    """Prefix the next chunk needs (a reopened code fence) or ""."""


def _pieces(text: str, limit: int, reopen: str = "") -> list[_Piece]:
    if limit < 16:
        raise ValueError("limit too small")
    pieces: list[_Piece] = []
    pos = 0
    while len(reopen) + len(text) - pos > limit:
        room = limit - len(reopen) - 4  # keep room for a closing fence
        window = text[pos : pos + room]
        cut = -1
        for sep in ("\n", " "):
            for i in range(len(window) - 1, room // 3, -1):
                if window[i] == sep and not _fence_open_at(text, pos + i):
                    cut = i + 1
                    break
            if cut >= 0:
                break
        if cut < 0:
            # Only a code block (or one giant word) fills the window: cut inside it, keep fences valid.
            nl = window.rfind("\n", room // 3)
            cut = nl + 1 if nl > 0 else room
        inside = _fence_open_at(text, pos + cut)
        head = (reopen + text[pos : pos + cut]).rstrip()
        if inside:
            head += "\n```"
            nxt = "```\n"
        else:
            nxt = ""
        pieces.append(_Piece(end=pos + cut, text=head, reopen=nxt))
        pos += cut
        reopen = nxt
    pieces.append(_Piece(end=len(text), text=reopen + text[pos:], reopen=""))
    return pieces


def split_message(text: str, limit: int = DISCORD_LIMIT) -> list[str]:
    """Split `text` into chunks of at most `limit` characters.

    Prefers a line boundary outside code blocks, then a word boundary outside code blocks; only a
    single code block longer than the limit is cut inside, and then the fence is closed and reopened
    so every chunk renders on its own.
    """
    return [p.text for p in _pieces(text, limit) if p.text.strip()] or [""]


@dataclass
class _Message:
    handle: Any
    shown: str
    last_edit: float
    status: bool = False
    """The message shows the status line (not yet answer text)."""
    pending: str | None = None
    pending_status: bool = False
    flush: asyncio.Task[None] | None = None


@dataclass
class Renderer:
    """Drives one reply: status line → streamed answer → final text, over one `Surface`."""

    surface: Surface
    edit_interval: float = 1.0
    locale: str = "ko"
    tools: ToolRegistry | None = None
    """Where the status line of each tool comes from."""
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    on_call: Callable[[SurfaceCall], None] | None = None
    """Told how long every send and edit took and whether it failed (the run's hooks: metrics)."""
    _messages: list[_Message] = field(default_factory=list)
    _frozen_at: int = 0
    _frozen_count: int = 0
    _reopen: str = ""
    _answer: str = ""
    _answering: bool = False
    _finished: bool = False
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    edits: int = 0
    sends: int = 0

    @property
    def limit(self) -> int:
        return self.surface.traits.max_chars

    # ---- status ---------------------------------------------------------------------------

    async def status(self, text: str) -> None:
        """Show progress in the first message (before the answer starts)."""
        if self._answering or self._finished:
            return
        async with self._lock:
            try:
                if not self._messages:
                    await self._send_new(text, status=True)
                else:
                    await self._edit_throttled(0, text, status=True)
            except SurfaceError as exc:  # progress only: the answer will still be shown
                log.warning("status line not shown: %s", exc)

    async def on_event(self, event: Any) -> None:
        """Engine event hook: `iteration` start → a status line naming what runs."""
        kind = getattr(event, "type", None)
        if kind == "iteration" and getattr(event, "status", None) == "start":
            await self.status(status_text(getattr(event, "tool_name", None), self.locale, self.tools))
        elif kind == "thinking" and getattr(event, "status", None) == "start" and not self._messages:
            await self.status(status_text(None, self.locale))

    # ---- answer ---------------------------------------------------------------------------

    async def append(self, delta: str) -> None:
        """Add streamed answer text; edits are throttled per message."""
        if self._finished or not delta:
            return
        self._answering = True
        self._answer += delta
        async with self._lock:
            try:
                await self._layout()
            except SurfaceError as exc:  # the final layout sends what streaming could not
                log.warning("streamed text not shown yet: %s", exc)

    async def finish(self, text: str | None = None) -> None:
        """Show the final text (the checked answer). Always lands: an edit that fails becomes a new message."""
        if text is not None:
            self._answer = text
        self._answering = True
        async with self._lock:
            self._finished = True
            for msg in self._messages:
                if msg.flush is not None:
                    msg.flush.cancel()
                    msg.flush = None
            await self._final_layout()

    @property
    def text(self) -> str:
        return self._answer

    async def _layout(self) -> None:
        """While streaming: complete parts are frozen (shown once), the last part is edited, throttled."""
        pieces = _pieces(self._answer[self._frozen_at :], self.limit, self._reopen)
        base = self._frozen_count
        for piece in pieces[:-1]:
            await self._put(base, piece.text, final=True)
            base += 1
        if len(pieces) > 1:
            self._frozen_at += pieces[-2].end
            self._reopen = pieces[-2].reopen
            self._frozen_count = base
        await self._put(base, pieces[-1].text, final=False)

    async def _final_layout(self) -> None:
        """Every part of the final text, checked against what each message shows.

        The split of the whole text equals the parts frozen while streaming, so a part whose message
        already shows it is left alone. When an edit fails (discord.py has already retried rate limits
        and 500/502/504 by then), that part and every part after it are sent as new messages, so the
        answer still reads in order; the messages they replace are deleted where the surface can.
        """
        parts = [p.text for p in _pieces(self._answer, self.limit) if p.text.strip()] or ["…"]
        existing = len(self._messages)
        for index, part in enumerate(parts):
            if index >= existing:
                await self._send_new(part)
                continue
            shown = self._messages[index]
            if (shown.shown == part and not shown.status) or await self._edit_now(index, part, wait=True):
                continue
            log.warning("an edit failed; sending the rest of the final answer as new messages")
            stale = self._messages[index:existing]
            for rest in parts[index:]:
                await self._send_new(rest)
            for msg in stale:
                await self._discard(msg)
            return
        # Messages left over from a longer streamed text must not keep stale words.
        for msg in self._messages[len(parts) : existing]:
            await self._discard(msg)

    async def _discard(self, msg: _Message) -> None:
        """Delete a message that no longer belongs to the answer (or blank it when deleting is not
        possible); best effort, the answer itself has landed."""
        try:
            if self.surface.traits.deletes:
                await self.surface.delete(msg.handle)
            elif msg.shown != "…":
                await self._timed("edit", self.surface.delete(msg.handle))
                msg.shown = "…"
        except SurfaceError:
            log.warning("could not clear a stale message")

    async def _put(self, index: int, text: str, *, final: bool) -> None:
        if not text.strip():
            text = "…"
        while len(self._messages) <= index:
            if len(self._messages) == index:
                await self._send_new(text)
                return
            await self._send_new("…")
        if final:
            await self._edit_now(index, text, wait=True)
        else:
            await self._edit_throttled(index, text)

    async def _timed(self, op: str, call: Awaitable[Any]) -> Any:
        """Await one surface call, telling `on_call` how long it took and whether it failed."""
        if self.on_call is None:
            return await call
        start = time.perf_counter()
        try:
            result = await call
        except Exception:
            self.on_call(SurfaceCall(op, time.perf_counter() - start, ok=False))
            raise
        self.on_call(SurfaceCall(op, time.perf_counter() - start))
        return result

    async def _send_new(self, text: str, *, status: bool = False) -> None:
        call = self.surface.status(text, None) if status else self.surface.send(text)
        handle = await self._timed("send", call)
        self.sends += 1
        self._messages.append(_Message(handle=handle, shown=text, last_edit=self.clock(), status=status))

    async def _edit_throttled(self, index: int, text: str, *, status: bool = False) -> None:
        msg = self._messages[index]
        if text == msg.shown and status == msg.status:
            msg.pending = None
            return
        wait = msg.last_edit + self.edit_interval - self.clock()
        if wait <= 0 and msg.flush is None:
            await self._edit_now(index, text, wait=False, status=status)
            return
        msg.pending, msg.pending_status = text, status
        if msg.flush is None:
            msg.flush = asyncio.create_task(self._flush_later(index, max(wait, 0.0)))

    async def _flush_later(self, index: int, wait: float) -> None:
        await self.sleep(wait)
        async with self._lock:
            msg = self._messages[index]
            msg.flush = None
            if msg.pending is not None and not self._finished:
                text, msg.pending = msg.pending, None
                await self._edit_now(index, text, wait=True, status=msg.pending_status)

    async def _edit_now(self, index: int, text: str, *, wait: bool, status: bool = False) -> bool:
        """One edit (of the status line when `status`, else of answer text); False when it failed (the
        caller decides what then)."""
        msg = self._messages[index]
        msg.pending = None
        if text == msg.shown and status == msg.status:
            return True
        if wait:
            delay = msg.last_edit + self.edit_interval - self.clock()
            if delay > 0:
                await self.sleep(delay)
        try:
            call = self.surface.status(text, msg.handle) if status else self.surface.edit(msg.handle, text)
            await self._timed("edit", call)
        except SurfaceError as exc:
            log.warning("edit failed: %s", exc)
            return False
        self.edits += 1
        msg.shown, msg.status = text, status
        msg.last_edit = self.clock()
        return True
