"""The channel interface is typed: a status line reaches a channel by `status`, answer text by `send` /
`edit`, so no channel decodes a glyph, and every call exists on every surface, so nothing is probed."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from bot.conversations.recording import RecordingSurface
from bot.conversations.renderer import Renderer, status_text
from bot.conversations.surface import ChannelTraits
from bot.players.discord_app.surface import DiscordSurface
from bot.players.terminal import ConsoleSurface

BOT = Path(__file__).resolve().parents[2] / "bot"
HOURGLASS_ANSWER = "⏳ 모래시계 모양 아이템은 이벤트 상점에서 살 수 있어요."
"""An answer that begins with the glyph a status line is rendered with."""

PROBE = re.compile(r"getattr\(\s*(?:self\.)?(?:surface|channel)\b")
GLYPH_DECODING = re.compile(r"startswith\(\s*(?:\"⏳|'⏳|_?STATUS_PREFIX)|status_text\([^)]*\)\.split")


def test_no_module_probes_a_surface_or_a_channel_with_getattr_or_decodes_the_status_glyph() -> None:
    probes, decodings = [], []
    for path in sorted(BOT.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        where = path.relative_to(BOT.parent)
        probes += [f"{where}: {m.group(0)}" for m in PROBE.finditer(source)]
        decodings += [f"{where}: {m.group(0)}" for m in GLYPH_DECODING.finditer(source)]
    assert probes == [], "ask the surface's typed calls or its `traits` instead"
    assert decodings == [], "a status line arrives by `Surface.status`; never tell it by its text"


def test_the_web_stream_does_not_read_the_run_id_from_the_logging_context() -> None:
    channels = [
        p
        for room in ("players", "staffroom")
        for p in (BOT / room).rglob("*.py")
        if "current_log_context" in p.read_text()
    ]
    assert channels == [], "the run id comes in by `Surface.start_run`"


class Calls(RecordingSurface):
    """A recording surface that also notes which typed call carried each text."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.calls: list[tuple[str, str]] = []

    async def status(self, text: str, handle: Any | None) -> int:
        self.calls.append(("status", text))
        return await super().status(text, handle)

    async def send(self, text: str) -> int:
        self.calls.append(("send", text))
        return await super().send(text)

    async def edit(self, handle: Any, text: str) -> None:
        self.calls.append(("edit", text))
        await super().edit(handle, text)


async def test_the_renderer_shows_the_status_line_by_status_and_an_answer_by_edit_whatever_its_first_letter():
    surface = Calls()
    renderer = Renderer(surface, edit_interval=0.0)
    await renderer.status(status_text(None, "ko"))
    assert surface.statuses == {0}
    await renderer.append(HOURGLASS_ANSWER)
    await renderer.finish(HOURGLASS_ANSWER)
    assert surface.calls[0] == ("status", status_text(None, "ko"))
    assert surface.calls[-1] == ("edit", HOURGLASS_ANSWER)
    assert all(kind != "status" for kind, _ in surface.calls[1:])
    assert surface.messages == {0: HOURGLASS_ANSWER} and surface.statuses == set()


async def test_a_status_line_and_an_answer_with_the_same_text_are_still_told_apart():
    surface = Calls()
    renderer = Renderer(surface, edit_interval=0.0)
    await renderer.status("⏳ 확인 중")
    await renderer.finish("⏳ 확인 중")  # the answer happens to read like the status line
    assert surface.calls == [("status", "⏳ 확인 중"), ("edit", "⏳ 확인 중")]
    assert surface.statuses == set()


async def test_the_renderer_splits_at_the_length_the_channel_declares():
    surface = RecordingSurface(max_chars=100)
    assert surface.traits == ChannelTraits(max_chars=100)
    renderer = Renderer(surface, edit_interval=0.0)
    await renderer.finish("가나다라 " * 60)
    assert len(surface.messages) > 1 and all(len(t) <= 100 for t in surface.messages.values())


class FakeMessage:
    def __init__(self, channel: FakeChannel, text: str) -> None:
        self.channel, self.content = channel, text
        self.deleted = False

    async def edit(self, *, content: str, **_: Any) -> FakeMessage:
        self.channel.log.append(("edit", content))
        self.content = content
        return self

    async def delete(self) -> None:
        self.deleted = True


class FakeChannel:
    """What `DiscordSurface` needs of a `discord.abc.Messageable`."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        self.typing_calls = 0

    async def send(self, text: str, **_: Any) -> FakeMessage:
        self.log.append(("send", text))
        return FakeMessage(self, text)

    async def typing(self) -> None:
        self.typing_calls += 1


async def test_discord_shows_a_status_line_as_an_edit_of_the_status_message_with_typing_until_the_answer():
    channel = FakeChannel()
    surface = DiscordSurface(channel)  # type: ignore[arg-type]
    renderer = Renderer(surface, edit_interval=0.0)
    await renderer.status("⏳ 주문 정보를 확인하고 있어요")
    await asyncio.sleep(0)
    assert surface.is_typing and channel.typing_calls == 1
    await renderer.status("⏳ 쿠폰 규칙을 확인하고 있어요")
    assert channel.log == [
        ("send", "⏳ 주문 정보를 확인하고 있어요"),
        ("edit", "⏳ 쿠폰 규칙을 확인하고 있어요"),
    ]
    assert surface.is_typing
    # An answer that begins with the hourglass is answer text: "typing…" ends.
    await renderer.finish(HOURGLASS_ANSWER)
    assert channel.log[-1] == ("edit", HOURGLASS_ANSWER)
    assert not surface.is_typing
    assert surface.last_sent is not None and surface.last_sent[1] == HOURGLASS_ANSWER


async def test_discord_declares_its_limits_and_what_it_can_do():
    surface = DiscordSurface(FakeChannel())  # type: ignore[arg-type]
    assert surface.traits.max_chars == 2000
    assert surface.traits.buttons and surface.traits.ephemeral and surface.traits.deletes
    assert surface.traits.edit_interval is None  # the conversation's pace (ARCA_EDIT_INTERVAL)


async def test_the_console_prints_an_answer_that_begins_with_the_hourglass_as_an_answer():
    import io

    out = io.StringIO()
    surface = ConsoleSurface(out)
    renderer = Renderer(surface, edit_interval=0.0)
    await renderer.status("⏳ 확인 중")
    await renderer.finish(HOURGLASS_ANSWER)
    surface.end_turn()
    assert f"🤖 {HOURGLASS_ANSWER}" in out.getvalue()
