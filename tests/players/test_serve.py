"""`bot.serving.process.serve`, the one start-and-stop: the web channel alone starts without an LLM and stops on
SIGTERM with status 0; an address that cannot be bound ends with one line and status 2 before Discord
is contacted."""

from __future__ import annotations

import asyncio
import os
import signal
import socket

import httpx

from bot.serving.process import serve
from tests.eventually import eventually
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.support.discord import make_settings
from tests.support.serving import SECRET, _free_port


async def test_the_web_channel_alone_serves_without_an_llm_and_sigterm_returns_0(tmp_path):
    port = _free_port()
    settings = make_settings(tmp_path / "var", discord_token=None, web_port=port, web_secret=SECRET)
    running = asyncio.create_task(serve(settings, discord=False, web=True, policy_index=EmptyPolicyIndex()))
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:

            async def health() -> dict | None:
                try:
                    return (await client.get("/healthz")).json()
                except httpx.TransportError:
                    assert not running.done(), running.result()
                    return None

            body = await eventually(health, what="/healthz")
            assert body["status"] == "ok" and body["llm"] is False
            chat = await client.post("/api/chat", json={"thread": "main", "message": "안녕"})
            assert chat.status_code == 503

        os.kill(os.getpid(), signal.SIGTERM)
        assert await asyncio.wait_for(running, 10) == 0
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0, "the server stopped listening"
    finally:
        if not running.done():
            running.cancel()
            await asyncio.wait({running}, timeout=10)


async def test_an_address_in_use_ends_with_one_line_before_discord_is_contacted(fake, tmp_path, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = make_settings(
            tmp_path / "var",
            web_port=port,
            web_secret=SECRET,
            model="fake-model",
            openai_base_url="http://127.0.0.1:9/v1",
            openai_api_key="sk-test-not-a-real-key",
        )
        status = await serve(settings, web=True, policy_index=EmptyPolicyIndex())

    err = capsys.readouterr().err
    assert status == 2
    assert "cannot serve the web channel" in err and "Traceback" not in err
    assert fake.calls == [], "Discord is not contacted"
