"""`arca-bot chat` in a real pseudo-terminal: Ctrl-C stops the running answer, not the program."""

from __future__ import annotations

import asyncio
import os
import pty
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.app import PROJECT_ROOT
from tests.fakes.openai_server import FakeOpenAIServer, fault, reply


class Terminal:
    """The master side of a pty: everything the program printed, readable without blocking."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.output = ""
        os.set_blocking(fd, False)

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except (BlockingIOError, OSError):
                return
            if not chunk:
                return
            self.output += chunk.decode("utf-8", "replace")

    async def expect(self, text: str, *, within: float = 60.0, after: int = 0) -> int:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            self._drain()
            at = self.output.find(text, after)
            if at >= 0:
                return at + len(text)
            await asyncio.sleep(0.05)
        raise AssertionError(f"{text!r} never appeared; the terminal showed:\n{self.output[-2000:]}")

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode("utf-8"))


@pytest.mark.slow
async def test_ctrl_c_stops_the_answer_and_the_console_keeps_going(tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    for name in ("name_change.md", "coupon_rules.yaml"):
        shutil.copy(PROJECT_ROOT / "policies" / name, policies / name)
    replies = [
        fault("hang", seconds=60),  # the first question: the model never answers
        reply("두 번째 질문 잘 받았습니다."),  # the loop's final answer for the second question
        reply("두 번째 질문 잘 받았습니다."),  # its streamed synthesis
    ]
    async with FakeOpenAIServer(replies) as server:
        env = {
            **os.environ,
            "TERM": "xterm",
            "ARCA_DATA_DIR": str(tmp_path / "var"),
            "ARCA_POLICIES_DIR": str(policies),
            "ARCA_MODEL": "fake-model",
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-test",
            "ARCA_LLM_MAX_RETRIES": "0",
            "ARCA_CONFIG": "",
        }
        master, slave = pty.openpty()
        proc = subprocess.Popen(  # noqa: ASYNC220 - the pty's slave fd is handed to a plain Popen
            [sys.executable, "-m", "bot", "chat", "--channel", "tty"],
            stdin=slave,
            stdout=slave,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=tmp_path,
            start_new_session=True,
        )
        os.close(slave)
        term = Terminal(master)
        try:
            await term.expect("›", within=120)
            term.type("ORD001 어디쯤 왔어요?\r")
            deadline = time.monotonic() + 30
            while not server.requests and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
            assert server.requests, "the question never reached the model"
            mark = len(term.output)
            term.type("\x03")  # Ctrl-C while the model is still thinking
            await term.expect("중단", after=mark)
            assert proc.poll() is None, "Ctrl-C must stop the answer, not the program"

            term.type("두 번째 질문이에요\r")
            await term.expect("두 번째 질문 잘 받았습니다.")
            term.type("\x04")  # Ctrl-D quits
            assert await asyncio.to_thread(proc.wait, 30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            os.close(master)
