"""Fixtures for the web channel: the real app (seeded SQLite store) served by the real uvicorn server on
127.0.0.1, scripted models queued per run, an HTTP client and an SSE reader."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.app import App, build_app
from bot.channels.web.app import WebDeps, create_app
from bot.channels.web.player.identity import IdentityService
from bot.channels.web.startup import WebServer
from bot.config import load_settings
from bot.llm.scripted import ScriptedLLM
from bot.store import Store
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


@pytest.fixture(autouse=True)
def _no_web_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in WEB_ENV:
        monkeypatch.delenv(name, raising=False)


class EmptyPolicyIndex:
    """No policy documents: these tests never retrieve, and building the real index takes ~25 s."""

    async def search(self, query: str, top_k: int = 3) -> list[Any]:
        return []


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


@pytest.fixture
async def make_web(seeded_store: Store, tmp_path: Path) -> AsyncIterator[WebFactory]:
    """`await make_web(mode="native", llm_factory=None, settings=None, **deps_fields)` → a running WebHarness."""
    harnesses: list[WebHarness] = []

    async def make(
        mode: str = "native",
        *,
        llm_factory: Callable[[], Any] | None = None,
        settings: Any = None,
        metrics: Any = None,
        **deps_fields: Any,
    ) -> WebHarness:
        settings = settings or load_settings(ARCA_DATA_DIR=str(tmp_path), ARCA_WEB_SECRET=SECRET)
        queue: list[Any] = []

        def next_llm() -> Any:
            if not queue:
                raise AssertionError("the bot called the model but no script was queued")
            return queue.pop(0)

        app = await build_app(
            settings,
            llm_factory=llm_factory or next_llm,
            store=seeded_store,
            policy_index=EmptyPolicyIndex(),
            clock=lambda: FIXED_NOW,
            metrics=metrics,
        )
        identities = IdentityService(SECRET)
        deps = replace(
            WebDeps.from_settings(settings, app.conversations, identities),
            **{"llm_ready": True, **deps_fields},
        )
        server = await WebServer(create_app(deps), "127.0.0.1", 0).start()
        harness = WebHarness(app, server, deps, identities, mode, queue)
        harnesses.append(harness)
        return harness

    yield make
    for h in harnesses:
        for c in h.clients:
            await c.aclose()
        await asyncio.wait_for(h.conversations.wait_idle(), 15)
        await h.server.stop()
