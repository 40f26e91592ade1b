"""The console channel (`arca-bot chat`): the same `Conversations` as Discord, in a terminal.

The answer streams in place; a line typed while the bot works becomes an interrupt; lines starting
with `/` are staff commands (an incident's compensation approval draws a progress bar); Ctrl-C stops the run, not the program; Ctrl-D quits. With stdin not a
terminal (a pipe, a test), each line waits for the previous answer, so a session is reproducible.
"""

from __future__ import annotations

import asyncio
import re
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape

from bot.conversations import Conversations, Incoming
from bot.conversations.surface import ChannelTraits, SurfaceBase
from bot.incidents import progress
from bot.vocabulary import ThreadId

_APPROVAL = re.compile(r"/incident\s+compensate\s+(?P<id>[0-9]{1,12})\s+(?:approve|승인)\s*", re.IGNORECASE)
"""A staff line that starts an incident's bulk compensation: the console draws its progress bar."""
MIN_PROGRESS_INTERVAL = 0.1

_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: window titles, hyperlinks, clipboard writes
    r"|\x1b[P^_X][^\x1b]*\x1b\\"  # DCS / PM / APC / SOS strings
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: clear screen, cursor moves, colours (7- and 8-bit)
    r"|\x1b[ -/]*[0-~]"  # two-character escapes (ESC c resets the terminal)
)
_UNFINISHED_SEQUENCE = re.compile(
    r"(?:\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[P^_X][^\x1b]*)?|\x9b[0-?]*[ -/]*)$"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """Text with terminal escape sequences and control characters removed (newlines and tabs kept).

    The model's words are printed, never obeyed by the terminal: `\x1b[2J` would clear the screen,
    an OSC sequence would retitle the window or plant a hyperlink. The player's input is cleaned the
    same way by the input guard. A sequence cut at the end of a streamed edit is held back until the
    next edit completes it.
    """
    text = _ESCAPE_SEQUENCE.sub("", text)
    text = _UNFINISHED_SEQUENCE.sub("", text)
    return _CONTROL.sub("", text)


class ConsoleSurface(SurfaceBase):
    """Messages are printed once; an edit that extends a message prints only the new text. The status line
    is printed dim, once per change."""

    traits = ChannelTraits(max_chars=100_000)

    def __init__(self, out: TextIO | None = None, *, color: bool | None = None) -> None:
        self.out = out or sys.stdout
        self.console = Console(file=self.out, highlight=False, force_terminal=color, soft_wrap=True)
        self._texts: dict[int, str] = {}
        self._current: int | None = None
        self._status: set[int] = set()

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def _end_line(self) -> None:
        if self._current is not None:
            self._write("\n")
            self._current = None

    async def status(self, text: str, handle: Any | None) -> int:
        text = terminal_safe(text)
        if handle is None:
            handle = len(self._texts)
        elif self._texts.get(handle) == text and handle in self._status:
            return handle
        self._texts[handle] = text
        self._status.add(handle)
        self._end_line()
        self.console.print(f"[dim]{escape(text)}[/dim]")
        return handle

    async def send(self, text: str) -> int:
        text = terminal_safe(text)
        self._end_line()
        handle = len(self._texts)
        self._texts[handle] = text
        self._write("🤖 " + text)
        self._current = handle
        return handle

    async def edit(self, handle: Any, text: str) -> None:
        text = terminal_safe(text)
        old = self._texts.get(handle, "")
        self._texts[handle] = text
        if handle in self._status:
            # The status message turns into the answer.
            self._status.discard(handle)
            self._end_line()
            self._write("🤖 " + text)
            self._current = handle
            return
        if self._current == handle and text.startswith(old):
            self._write(text[len(old) :])
            return
        self._end_line()
        self._write("🤖 " + text)
        self._current = handle

    async def react(self, ref: Any, emoji: str) -> None:
        self._end_line()
        self.console.print(f"[dim]{emoji} (추가 메시지를 작업 중인 답변에 전달했습니다)[/dim]")

    async def ephemeral(self, text: str) -> None:
        self._end_line()
        self.console.print(terminal_safe(text), markup=False)

    def end_turn(self) -> None:
        self._end_line()


async def draw_progress(
    conversations: Conversations, surface: ConsoleSurface, incident_id: int, run: asyncio.Task[Any]
) -> None:
    """While `run` (an approval) goes on, print the compensation's progress bar whenever it moved (read
    from the store, as the Discord card and the staff web console do), then once more at the end."""
    interval = max(2 * conversations.edit_interval, MIN_PROGRESS_INTERVAL)
    shown = None
    while True:
        finished = run.done()
        step = await progress(conversations.store, incident_id)
        if step is not None and step.state in ("approved", "done") and (step.done, step.state) != shown:
            shown = (step.done, step.state)
            surface.end_turn()
            surface.console.print(
                f"[cyan]보상 진행 / progress {escape(step.bar())} · {escape(step.text())}[/cyan]"
            )
        if finished:
            return
        await asyncio.wait({run}, timeout=interval)


async def run_console(
    conversations: Conversations,
    *,
    discord_id: str,
    roles: set[str],
    channel: str = "main",
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    banner: str | None = None,
) -> int:
    """Chat until EOF. Returns the exit status."""
    stdin = stdin or sys.stdin
    surface = ConsoleSurface(out)
    thread = ThreadId.console(channel)
    actor = await conversations.resolve_actor(discord_id, roles, display_name=f"console:{discord_id}")

    async def staff_sink(kind: str, payload: dict[str, Any]) -> None:
        surface.end_turn()
        surface.console.print(
            f"[bold magenta]📣 staff channel · {escape(kind)}[/bold magenta] {escape(terminal_safe(str(payload)))}",
            markup=True,
        )

    conversations.staff_sinks.append(staff_sink)
    if banner:
        surface.console.print(banner)
    who = f"player {actor.player_id}" if actor.player_id else "an unlinked Discord user"
    surface.console.print(
        f"[dim]channel {thread} · as Discord {discord_id} ({who}{', staff' if actor.is_staff else ''}) · "
        "Ctrl-C stops an answer, Ctrl-D quits[/dim]"
    )
    tasks: set[asyncio.Task[Any]] = set()

    async def submit(line: str) -> None:
        task = asyncio.create_task(conversations.handle(Incoming(thread, actor, line, ref=None), surface))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        approval = _APPROVAL.fullmatch(line.strip())
        if approval is not None and actor.is_staff:
            bar = asyncio.create_task(draw_progress(conversations, surface, int(approval["id"]), task))
            tasks.add(bar)
            bar.add_done_callback(tasks.discard)

    if not stdin.isatty():
        while True:
            line = await asyncio.to_thread(stdin.readline)
            if not line:
                break
            line = line.rstrip("\n")
            if not line.strip():
                continue
            await submit(line)
            await asyncio.gather(*tasks)
            await conversations.wait_idle(thread)
            surface.end_turn()
        return 0

    from prompt_toolkit import PromptSession
    from prompt_toolkit.patch_stdout import patch_stdout

    session: PromptSession[str] = PromptSession()
    with patch_stdout(raw=True):
        while True:
            try:
                line = await session.prompt_async("› ")
            except KeyboardInterrupt:
                if conversations.is_running(thread):
                    await conversations.stop(thread)
                else:
                    surface.console.print("[dim](Ctrl-D to quit)[/dim]")
                continue
            except EOFError:
                break
            if line.strip():
                await submit(line)
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)
    return 0
