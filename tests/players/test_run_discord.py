"""`arca-bot run` (`bot.serving.process.serve`): a missing or rejected token ends with one clear line and an exit
status, no traceback; SIGTERM stops the running client and the call returns 0."""

from __future__ import annotations

import asyncio
import os
import signal

from bot.app import build_app
from bot.llm.scripted import ScriptedLLM
from bot.serving.process import serve
from tests.fakes.knowledge import EmptyPolicyIndex


async def test_missing_token_prints_one_line_and_touches_nothing(harness, fake, capsys):
    status = await serve(harness.settings(discord_token=None))

    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and "DISCORD_TOKEN is not set" in err
    assert fake.calls == []
    assert not harness.data_dir.exists(), "no store was opened"


async def test_rejected_token_prints_one_line(harness, fake, capsys):
    settings = harness.settings(discord_token="not-the-right-token")
    app = await build_app(settings, llm_factory=lambda: ScriptedLLM([]), policy_index=EmptyPolicyIndex())
    try:
        status = await serve(settings, app=app)
    finally:
        await app.store.close()

    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and "rejected DISCORD_TOKEN" in err
    assert "Traceback" not in err
    assert [c.status for c in fake.calls_to("GET", r"^/users/@me$")] == [401]


async def test_sigterm_closes_the_client_and_returns_0(harness, fake):
    settings = harness.settings()
    app = await build_app(settings, llm_factory=lambda: ScriptedLLM([]), policy_index=EmptyPolicyIndex())
    try:
        running = asyncio.create_task(serve(settings, app=app, guild_ready_timeout=0.05))
        while not fake.calls_to("PUT", r"/commands$"):  # logged in, slash commands synced
            assert not running.done(), running.result()
            await asyncio.sleep(0.02)
        os.kill(os.getpid(), signal.SIGTERM)
        assert await asyncio.wait_for(running, 10) == 0
    finally:
        await app.store.close()
