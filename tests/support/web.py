"""What tests under tests/web/ share (helpers and constants; the fixtures are in its conftest.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

from bot.app import App
from bot.llm.scripted import ScriptedLLM
from bot.players.web.sse.stream import RunStream
from bot.serving.web.app import WebDeps
from bot.serving.web.startup import WebServer
from bot.web_kit.identity import IdentityService
from bot.web_kit.sse.wire import answer_payload, done_payload
from tests.fakes.held import Held

SECRET = "test-secret-for-the-web-channel-0123456789"
FIXED_NOW = datetime.fromisoformat("2026-11-30T10:00:00+09:00")
WEB_ENV = (
    "ARCA_WEB_HOST",
    "ARCA_WEB_PORT",
    "ARCA_WEB_ORIGINS",
    "ARCA_WEB_SECRET",
    "ARCA_WEB_PUBLIC_URL",
    "ARCA_WEB_RATE_LIMIT",
    "ARCA_WEB_RATE_LIMIT_IP",
    "ARCA_WEB_RATE_WINDOW",
    "ARCA_WEB_DEBUG",
)


@dataclass
class SSE:
    id: str
    event: str
    data: dict[str, Any]


async def read_sse(response: httpx.Response) -> AsyncIterator[SSE]:
    """Parse `text/event-stream` (pings and comments skipped)."""
    block: dict[str, Any] = {"data": []}
    async for line in response.aiter_lines():
        if line == "":
            if block["data"]:
                yield SSE(
                    block.get("id", ""), block.get("event", "message"), json.loads("\n".join(block["data"]))
                )
            block = {"data": []}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            block["data"].append(value)
        elif name in ("id", "event"):
            block[name] = value


@dataclass
class WebHarness:
    app: App
    server: WebServer
    deps: WebDeps
    identities: IdentityService
    mode: str
    queue: list[Any] = field(default_factory=list)
    clients: list[httpx.AsyncClient] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def conversations(self) -> Any:
        return self.app.conversations

    def script(self, *steps: dict[str, Any], **kwargs: Any) -> ScriptedLLM:
        """Queue the scripted model of the next run."""
        llm = ScriptedLLM(list(steps), mode=self.mode, **kwargs)
        self.queue.append(llm)
        return llm

    def held_script(self, *steps: dict[str, Any], **kwargs: Any) -> Held:
        """Queue a scripted model that holds its first loop call until `release()`."""
        held = Held(ScriptedLLM(list(steps), mode=self.mode, **kwargs))
        self.queue.append(held.llm)
        return held

    def token(self, player_id: str, ttl: float = 900) -> str:
        return self.identities.issue_token(player_id, ttl)

    def client(self, player_id: str | None = None, **kwargs: Any) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {self.token(player_id)}"} if player_id else {}
        headers.update(kwargs.pop("headers", {}))
        client = httpx.AsyncClient(base_url=self.url, headers=headers, timeout=20, **kwargs)
        self.clients.append(client)
        return client

    async def chat(self, client: httpx.AsyncClient, message: str, thread: str = "main") -> list[SSE]:
        """POST a message and read its whole event stream."""
        async with client.stream("POST", "/api/chat", json={"thread": thread, "message": message}) as r:
            assert r.status_code == 200, await r.aread()
            assert r.headers["content-type"].startswith("text/event-stream")
            return [e async for e in read_sse(r)]

    async def idle(self) -> None:
        await asyncio.wait_for(self.conversations.wait_idle(), 15)


WebFactory = Callable[..., Any]


THREAD = "web:P100:main"


def reply_stream(web, text: str) -> RunStream:
    """A staff reply's stream as the web outbox opens it (`staff_outbox`): it starts and ends at once."""
    streams = web.server.app.state.streams
    stream = RunStream(web.deps.new_id(), THREAD, clock=web.deps.clock)

    async def feed() -> None:
        stream.publish("answer", answer_payload("start"))
        stream.publish("answer", answer_payload("delta", text))
        stream.publish("answer", answer_payload("done"))
        stream.publish("done", done_payload(text, 0, {}, 0.0, None, by="staff", staff_name="Mina"))

    streams.add(stream)
    stream.feed(asyncio.create_task(feed()), lambda: streams.close(stream))
    return stream
