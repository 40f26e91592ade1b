"""Fixtures for the web channel: the real app (seeded SQLite store) served by the real uvicorn server on
127.0.0.1, scripted models queued per run, an HTTP client and an SSE reader, and headless Chromium
(`browser`, for tests/web and tests/web/staff)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, async_playwright, expect

from bot.app import build_app
from bot.config import load_settings
from bot.serving.web.app import WebDeps, create_app
from bot.serving.web.startup import WebServer
from bot.store import Store
from bot.web_kit.identity import IdentityService
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, EXPECT_WITHIN_MS
from tests.support.web import FIXED_NOW, SECRET, WEB_ENV, WebFactory, WebHarness


@pytest.fixture(autouse=True)
def _no_web_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in WEB_ENV:
        monkeypatch.delenv(name, raising=False)


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


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) or run scripts/test"
        )
    expect.set_options(timeout=EXPECT_WITHIN_MS)
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            await b.close()
