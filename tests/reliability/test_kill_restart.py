"""kill -9 of a real `arca-bot chat` process after `issue_coupon` ran and before the answer: after a
restart the thread's history is valid, the coupon is not issued twice, and the player is answered.

The model is the fake OpenAI server on 127.0.0.1, in this test's event loop; the bot is a subprocess
reading stdin in non-TTY mode (one line at a time, as a pipe feeds it).
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.llm.scripted import validate_history
from bot.store import AuditEntry, Coupon, Store
from tests.eventually import eventually
from tests.fakes.openai_server import FakeOpenAIServer, fault, reply
from tests.support.reliability import PYTHON, load_history

pytestmark = pytest.mark.slow

THREAD = "console:kill"
REQUEST = "ORD001 배송이 너무 늦어요. 5,000원 쿠폰 주세요"
AFTER_RESTART = "ORD001에는 이미 쿠폰이 발급되어 있어 새로 발급하지 않았습니다. 기존 쿠폰을 사용해 주세요."
ISSUE = {"name": "issue_coupon", "arguments": {"order_id": "ORD001", "amount": 5000, "reason": "배송 지연"}}


async def _start_bot(env: dict[str, str], server: FakeOpenAIServer, tmp_path: Path, tag: str) -> Any:
    env = {
        **env,
        "ARCA_MODEL": "fake-model",
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "sk-test-kill",
    }
    with (tmp_path / f"bot-{tag}.log").open("wb") as log:  # the child keeps its own copy of the file
        return await asyncio.create_subprocess_exec(
            PYTHON,
            "-m",
            "bot",
            "chat",
            "--as",
            "9001",
            "--channel",
            "kill",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            env=env,
            cwd=tmp_path,
        )


async def test_kill_9_after_issue_coupon_then_restart_keeps_history_valid_and_issues_once(cli_env, tmp_path):
    db_url = f"sqlite+aiosqlite:///{(tmp_path / 'var' / 'arca.db').resolve()}"
    replies = [
        reply(tool_calls=[{"name": "lookup_order", "arguments": {"order_id": "ORD001"}}]),
        reply(tool_calls=[ISSUE]),
        fault("hang", seconds=120),  # the model "thinks" about the answer; the process dies meanwhile
    ]
    async with FakeOpenAIServer(replies) as server:
        bot = await _start_bot(cli_env, server, tmp_path, "first")
        assert bot.stdin is not None
        bot.stdin.write((REQUEST + "\n").encode())
        await bot.stdin.drain()
        # The third model call only starts once issue_coupon has returned (its result is in the request).
        await eventually(
            lambda: len(server.requests) >= 3, within=90, what="the model call after issue_coupon"
        )
        assert any(m["role"] == "tool" for m in server.requests[2]["messages"])
        bot.send_signal(signal.SIGKILL)
        assert await bot.wait() == -signal.SIGKILL

        store = Store(db_url)
        await store.open()
        try:
            history = await load_history(store, THREAD)
            assert validate_history(history) == []
            assert [m["content"] for m in history if m["role"] == "user"] == [REQUEST]
            async with store.session() as s:
                assert (await s.execute(select(func.count(Coupon.id)))).scalar_one() == 1
        finally:
            await store.close()

        # Restart; the player asks again. The model tries to issue again and the ledger refuses.
        server.enqueue(reply(tool_calls=[ISSUE]), reply(AFTER_RESTART), reply(AFTER_RESTART))
        bot = await _start_bot(cli_env, server, tmp_path, "second")
        out, _ = await asyncio.wait_for(bot.communicate((REQUEST + "\n").encode()), 90)
        assert bot.returncode == 0, (tmp_path / "bot-second.log").read_text()

    stdout = out.decode()
    assert AFTER_RESTART in stdout
    first_after_restart = server.requests[3]["messages"]
    assert validate_history(first_after_restart) == []
    assert [m["content"] for m in first_after_restart if m["role"] == "user"] == [REQUEST, REQUEST]

    store = Store(db_url)
    await store.open()
    try:
        async with store.session() as s:
            coupons = list((await s.execute(select(Coupon))).scalars())
            codes = list(
                (
                    await s.execute(
                        select(AuditEntry.code)
                        .where(AuditEntry.action == "coupon.issue")
                        .order_by(AuditEntry.id)
                    )
                ).scalars()
            )
        history = await load_history(store, THREAD)
    finally:
        await store.close()
    assert len(coupons) == 1 and coupons[0].order_id == "ORD001"
    assert codes == ["ISSUED", "ALREADY_ISSUED"]
    assert validate_history(history) == []
    assert history[-1] == {"role": "assistant", "content": AFTER_RESTART}
