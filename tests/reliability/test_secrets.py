"""Secrets never surface: with `DISCORD_TOKEN` and `OPENAI_API_KEY` set to known values, runs full of errors
(500s from the model endpoint, a failing tool) with DEBUG logging print neither value — not in logs,
replies, audit rows, stored messages, the replay JSON report, or `arca-bot doctor` output.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.app import build_app
from bot.config import load_settings
from bot.store import AuditEntry, Store, ThreadMessage
from tests.fakes.openai_server import FakeOpenAIServer, fault, reply
from tests.support.reliability import PYTHON, say

pytestmark = pytest.mark.slow

OPENAI_KEY = "sk-arcaSECRETopenai0123456789abcdef"
DISCORD_TOKEN = "MTAzNDU2.arcaSECRETdiscord.tokenXYZ0123456789"
SECRET_PARTS = (OPENAI_KEY, DISCORD_TOKEN, "arcaSECRETopenai", "arcaSECRETdiscord")


def _assert_clean(where: str, text: str) -> None:
    for part in SECRET_PARTS:
        assert part not in text, f"{where} contains a secret ({part[:12]}…)"


class BrokenPolicyIndex:
    """The knowledge base is down: every search raises."""

    async def search(self, query: str, top_k: int = 3) -> list[Any]:
        raise RuntimeError("chroma at 127.0.0.1:1 refused the connection")


async def _database_text(db_url: str) -> str:
    store = Store(db_url)
    await store.open()
    try:
        async with store.session() as s:
            audits = (await s.execute(select(AuditEntry))).scalars().all()
            messages = (await s.execute(select(ThreadMessage))).scalars().all()
    finally:
        await store.close()
    rows = [repr((a.actor, a.action, a.target, a.code, a.detail, a.thread_id)) for a in audits]
    rows += [repr((m.role, m.content, m.tool_calls, m.meta)) for m in messages]
    assert rows
    return "\n".join(rows)


async def test_a_failing_run_in_process_with_debug_logs_reveals_no_secret(monkeypatch, caplog, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("DISCORD_TOKEN", DISCORD_TOKEN)
    for name in ("", "openai", "httpx", "httpcore", "bot", "tools", "discord"):
        caplog.set_level(logging.DEBUG, logger=name or None)
    script = [
        fault("500", message=f"upstream says: bad key {OPENAI_KEY}"),  # a server that echoes the key back
        fault("500"),
        fault("500"),
        reply(tool_calls=[{"name": "search_policy", "arguments": {"query": "환불 규정"}}]),
        reply("환불은 결제 후 7일 이내에 가능합니다."),
        fault("500"),
        fault("500"),
        fault("500"),
    ]
    async with FakeOpenAIServer(script) as server:
        settings = load_settings(
            data_dir=tmp_path / "var",
            model="fake-model",
            openai_base_url=server.base_url,
            log_level="DEBUG",
            edit_interval=0.0,
        )
        assert settings.openai_api_key is not None and settings.discord_token is not None
        app = await build_app(settings, policy_index=BrokenPolicyIndex())
        _, first = await say(app, "ORD001 배송 언제 와요?", thread="console:secrets")
        _, second = await say(app, "환불 규정 알려 주세요", thread="console:secrets")
        await app.store.close()
    # The key was really used (so the checks below can fail), and it went only into the header.
    assert server.headers and all(h.get("Authorization") == f"Bearer {OPENAI_KEY}" for h in server.headers)
    assert "AI 모델에 연결할 수 없어" in first.all_text and second.all_text.strip()

    _assert_clean("the log", caplog.text)
    _assert_clean("the replies", first.text + second.text)
    _assert_clean("the database", await _database_text(settings.database_url))
    _assert_clean("the settings repr", repr(settings) + str(settings.model_dump()))


async def _run(args: list[str], env: dict[str, str], cwd: Path, stdin: str = "") -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        PYTHON,
        "-m",
        "bot",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=env,
        cwd=cwd,
    )
    out, _ = await asyncio.wait_for(proc.communicate(stdin.encode()), 120)
    code = proc.returncode
    assert isinstance(code, int)  # communicate() waits for the exit; each caller checks the code itself
    return code, out.decode("utf-8", "replace")


REPLAY_CASE = """\
name: secrets stay secret in the report
fixtures:
  players: [{id: P100, discord_id: "9001", name: 루나}]
  orders: [{id: ORD001, player_id: P100, status: delayed, item: 한정판 굿즈 세트, amount: 39000}]
turns:
  - user: "ORD001 배송 언제 와요?"
    script:
      - {tool: lookup_order, args: {order_id: ORD001}}
      - {tool: no_such_tool, args: {x: 1}}
      - {final: "ORD001은 배송 지연 상태입니다."}
    expect:
      codes: [OK]
      answer_contains: ["이 문장은 답에 없습니다"]
  - user: "쿠폰도 주세요"
    script:
      - {tool: issue_coupon, args: {order_id: ORD001, amount: 90000}}
      - {final: "한도를 넘는 금액이라 발급할 수 없습니다."}
"""


async def test_cli_commands_with_debug_logging_reveal_no_secret(cli_env, tmp_path):
    async with FakeOpenAIServer([fault("500")] * 3, default_reply=None) as server:
        env = {
            **cli_env,
            "OPENAI_API_KEY": OPENAI_KEY,
            "DISCORD_TOKEN": DISCORD_TOKEN,
            "ARCA_MODEL": "fake-model",
            "OPENAI_BASE_URL": server.base_url,
            "ARCA_LOG_LEVEL": "DEBUG",
        }
        code, chat = await _run(["chat", "--channel", "secrets"], env, tmp_path, "ORD001 배송 언제 와요?\n")
        assert code == 0 and "AI 모델에 연결할 수 없어" in chat, chat[-2000:]

        code, doctor = await _run(["doctor"], env, tmp_path)
        # Every item is ready (the fake endpoint answers, a token is set): doctor exits 0 and says so.
        assert code == 0 and doctor.rstrip().endswith("ready"), doctor
        assert "Discord token" in doctor and "LLM endpoint" in doctor, doctor

        case = tmp_path / "case.yaml"
        case.write_text(REPLAY_CASE, encoding="utf-8")
        report = tmp_path / "report.json"
        code, replay = await _run(
            ["replay", str(case), "--mode", "native", "--report", str(report)], env, tmp_path
        )
        assert code == 1, replay  # the case fails on purpose: failure details go into the report
        assert report.is_file()

    assert len(server.requests) >= 1
    _assert_clean("`arca-bot chat` output and DEBUG log", chat)
    _assert_clean("`arca-bot doctor` output", doctor)
    _assert_clean("`arca-bot replay` output", replay)
    _assert_clean("the replay report", report.read_text(encoding="utf-8"))
    _assert_clean(
        "the database",
        await _database_text(f"sqlite+aiosqlite:///{(tmp_path / 'var' / 'arca.db').resolve()}"),
    )
