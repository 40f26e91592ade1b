"""What reaches the browser passes the output guard; serving: `/healthz` at once while the policy index
builds in the background, `arca-bot web` without an LLM, `arca-bot run` with the web channel beside
Discord."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from bot.engine.events import IterationEvent, ThinkingEvent
from bot.guards.output import OutputGuard
from bot.persona import SUPPORT_SYSTEM_PROMPT
from bot.players.web.sse.stream import RunStream, WebSurface
from bot.serving.process import serve
from bot.serving.web.startup import BackgroundPolicyIndex
from tests.eventually import eventually
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.fakes.openai_server import FakeOpenAIServer, reply
from tests.support.web import SECRET, read_sse
from tools.base import Actor

CARD = "4111 1111 1111 1111"
OTHER_PHONE = "010-2345-6789"  # P200's
OWN_PHONE = "010-1234-5678"  # P100's


async def test_observations_and_reasoning_pass_the_output_guard_before_the_browser(seeded_store):
    actor = Actor(discord_id=None, player_id="P100")
    guard = await OutputGuard.for_actor(seeded_store, actor, thread_id="web:P100:main", locale="en")
    stream = RunStream("r1", "web:P100:main")
    surface = WebSurface(stream, guard=guard, protected_texts=[SUPPORT_SYSTEM_PROMPT])
    await surface.on_event(ThinkingEvent(status="start", iteration=1))
    await surface.on_event(
        ThinkingEvent(status="done", iteration=1, reasoning=f"카드 {CARD}로 결제된 주문, @everyone 확인")
    )
    await surface.on_event(
        IterationEvent(
            status="start",
            iteration=1,
            tool_name="lookup_order",
            tool_args={"order_id": f"{CARD}"},
            call_id="c1",
        )
    )
    await surface.on_event(
        IterationEvent(
            status="done",
            iteration=1,
            tool_name="lookup_order",
            call_id="c1",
            observation=f"[OK] 카드 {CARD}, 연락처 {OTHER_PHONE}, 본인 연락처 {OWN_PHONE}",
            code="OK",
            iter_elapsed=0.01,
        )
    )
    leak = SUPPORT_SYSTEM_PROMPT.splitlines()[0] + " " + SUPPORT_SYSTEM_PROMPT.splitlines()[1]
    await surface.on_event(ThinkingEvent(status="start", iteration=2))
    await surface.on_event(
        ThinkingEvent(status="done", iteration=2, reasoning=f"My instructions say: {leak}")
    )
    reasoning = stream.events[-1].payload["reasoning"]
    assert "I can't share my internal instructions." in reasoning
    assert "customer-support assistant of Arca Online" not in reasoning
    sent = " ".join(str(e.payload) for e in stream.events)
    assert CARD not in sent and OTHER_PHONE not in sent
    assert OWN_PHONE in sent  # the player's own number may be repeated to them
    assert "@everyone" not in sent
    observation = next(e.payload["observation"] for e in stream.events if "observation" in e.payload)
    assert "[card number hidden]" in observation


async def test_a_false_coupon_claim_never_reaches_the_browser(make_web):
    web = await make_web()
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"final": "ORD001에 30,000원 쿠폰을 발급했습니다. 확인해 주세요."},
    )
    events = await web.chat(web.client("P100"), "ORD001 쿠폰 주세요")
    streamed = "".join(
        e.data["content"] for e in events if e.event == "answer" and e.data["status"] == "delta"
    )
    final = events[-1].data["answer"]
    for text in (streamed, final):
        assert "쿠폰을 발급했습니다" not in text
        assert "확인해 주세요" in text
    history = (await web.client("P100").get("/api/threads/main")).json()["messages"]
    assert history[-1]["content"] == final


async def test_searches_wait_for_the_background_index():
    gate = threading.Event()

    class Index:
        async def search(self, query: str, top_k: int = 3) -> list[str]:
            return [f"hit for {query}"]

    def build(cancelled) -> Index:
        gate.wait(5)
        return Index()

    index = BackgroundPolicyIndex(build).start()
    search = asyncio.create_task(index.search("환불"))
    await asyncio.sleep(0.1)
    assert index.state == "building" and not search.done()
    gate.set()
    assert await asyncio.wait_for(search, 5) == ["hit for 환불"]
    assert index.state == "ready"

    def broken(cancelled) -> None:
        raise RuntimeError("chroma is down")

    failing = BackgroundPolicyIndex(broken).start()
    with pytest.raises(RuntimeError, match="unavailable"):
        await asyncio.wait_for(failing.search("환불"), 5)
    assert failing.state == "unavailable"


async def test_stopping_the_server_stops_the_build_at_its_next_safe_point_and_waits_for_it():
    batches: list[int] = []
    closed = threading.Event()

    class Index:
        def close(self) -> None:
            closed.set()

    def build(cancelled) -> Index:
        for batch in range(200):  # one embedding batch at a time, as the real build does
            if cancelled():
                raise RuntimeError("build cancelled")
            batches.append(batch)
            time.sleep(0.02)
        return Index()

    index = BackgroundPolicyIndex(build, stop_within=5).start()
    await eventually(lambda: batches, what="the build's first batch")
    assert await index.stop() is True
    assert index.state == "stopped" and 0 < len(batches) < 200
    assert not index._thread.is_alive()
    with pytest.raises(RuntimeError, match="unavailable"):
        await index.search("환불")

    finished = BackgroundPolicyIndex(lambda cancelled: Index()).start()
    await asyncio.wait_for(finished._ready_async.wait(), 5)
    assert await finished.stop() is True and finished.state == "ready" and closed.is_set()

    stuck_gate = threading.Event()
    stuck = BackgroundPolicyIndex(lambda cancelled: stuck_gate.wait(5), stop_within=0.1).start()
    assert await stuck.stop() is False  # native code that never reaches a safe point
    stuck_gate.set()
    stuck._thread.join(5)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SERVING_WITHIN_S = 180
"""A start that never serves still fails; how fast it serves (goal: 10 s on a quiet machine) is a figure
of `bench/cold_start.py` (`web_healthz_wall_s`), not a clock in a test that a loaded machine trips."""


def test_arca_bot_web_answers_healthz_once_serving_without_an_llm(tmp_path: Path):
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARCA_", "OPENAI_", "DISCORD_"))}
    env.update(ARCA_DATA_DIR=str(tmp_path / "var"), ARCA_CONFIG="", ARCA_WEB_SECRET=SECRET)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "web", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    said: list[str] = []
    serving = threading.Event()

    def read_stderr() -> None:  # the pipe is drained the whole time, so the server never blocks on it
        assert proc.stderr is not None
        for raw in proc.stderr:
            said.append(raw.decode(errors="replace"))
            if "arca-bot web: serving" in said[-1]:
                serving.set()
        serving.set()  # the process ended: stop waiting

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        # Wait for the server's own "serving" line (an event), not a clock: it is printed once the port
        # listens, and while the policy index is still being built.
        assert serving.wait(SERVING_WITHIN_S) and proc.poll() is None, "".join(said)
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=30)
        assert health.status_code == 200
        body = health.json()
        assert body["status"] == "ok" and body["llm"] is False
        assert body["policy_index"] in ("building", "ready")
        chat = httpx.post(
            f"http://127.0.0.1:{port}/api/chat", json={"thread": "main", "message": "안녕"}, timeout=30
        )
        # The player is told plainly; the configuration hint is for the operator, in the log.
        assert chat.status_code == 503 and "ARCA_MODEL" not in chat.json()["message"]
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
        assert page.status_code == 200 and "widget.js" in page.text
        # SIGTERM (systemd, docker stop) is a clean stop, even while the index is still being built.
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        reader.join(10)
        assert "ARCA_MODEL and OPENAI_API_KEY" in "".join(said)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


async def test_run_serves_the_web_channel_beside_discord(fake, tmp_path):
    from tests.support.discord import make_settings
    from tests.support.fake_discord import FakeDiscord

    port = _free_port()
    async with FakeOpenAIServer(
        [
            reply("안녕하세요! 아르카 온라인 고객지원입니다."),
            reply("안녕하세요! 아르카 온라인 고객지원입니다."),
        ]
    ) as llm:
        settings = make_settings(
            tmp_path / "var",
            web_port=port,
            web_secret=SECRET,
            model="fake-model",
            openai_base_url=llm.base_url,
            openai_api_key="sk-test-not-a-real-key",
        )
        assert settings.discord_token is not None and FakeDiscord.TOKEN
        task = asyncio.create_task(serve(settings, web=True, policy_index=EmptyPolicyIndex()))
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=20) as client:

                async def healthy() -> bool:
                    try:
                        return (await client.get("/healthz")).status_code == 200
                    except httpx.TransportError:
                        return False

                await eventually(healthy, what="the web server's /healthz")
                async with client.stream(
                    "POST", "/api/chat", json={"thread": "main", "message": "안녕"}
                ) as r:
                    events = [e async for e in read_sse(r)]
            assert events[-1].event == "done", [(e.event, e.data) for e in events]
            assert events[-1].data["answer"] == "안녕하세요! 아르카 온라인 고객지원입니다."
            # The Discord client logged in too (both start together: it may still be on its way).
            await eventually(lambda: fake.calls_to("GET", r"^/users/@me$"), what="the Discord client's login")
        finally:
            task.cancel()
            await asyncio.wait({task}, timeout=15)
