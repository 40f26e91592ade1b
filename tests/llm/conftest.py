"""LLM test fixtures: the fake OpenAI-compatible server on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server
