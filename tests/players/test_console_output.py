"""The console prints the model's text, never the terminal's commands; chat keeps INFO logs off the
conversation."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bot.cli import main
from bot.players.terminal import ConsoleSurface, terminal_safe
from tests.support.console import chat_env

HOSTILE = "안녕\x1b[2J\x1b[H하세요\x1b]0;owned title\x07 ok\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\ \x9b31m\r\x07\x08end"


def test_escape_sequences_and_control_characters_are_removed() -> None:
    assert terminal_safe(HOSTILE) == "안녕하세요 oklink end"
    assert terminal_safe("줄 1\n\t줄 2") == "줄 1\n\t줄 2"


async def test_the_surface_prints_no_escape_sequence_even_when_one_is_split_across_edits() -> None:
    out = io.StringIO()
    surface = ConsoleSurface(out)
    handle = await surface.status("⏳ [bold]생각 중\x1b[31m", None)
    await surface.edit(handle, "답변: 안녕\x1b[")  # the stream stops inside an escape sequence
    await surface.edit(handle, "답변: 안녕\x1b[2J하세요")
    await surface.edit(handle, "답변: 안녕\x1b[2J하세요\x1b]0;title\x07!")
    await surface.ephemeral("staff \x1b[5m깜빡")
    surface.end_turn()
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert "🤖 답변: 안녕하세요!" in text
    assert text.count("🤖") == 1  # the answer was extended in place, not printed again
    assert "[bold]생각 중" in text  # model text is not rich markup either


@pytest.mark.slow
def test_chat_keeps_info_log_lines_out_of_the_conversation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    chat_env(tmp_path, monkeypatch)
    assert main(["chat"]) == 0  # seeds the empty database and builds the index: INFO lines before
    err = capsys.readouterr().err
    assert " INFO " not in err and "seeded" not in err, err


@pytest.mark.slow
def test_chat_shows_info_logs_when_the_operator_asks_for_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    chat_env(tmp_path, monkeypatch)
    monkeypatch.setenv("ARCA_LOG_LEVEL", "INFO")
    assert main(["chat"]) == 0
    assert "seeded" in capsys.readouterr().err
