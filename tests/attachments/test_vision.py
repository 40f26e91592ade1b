"""A model that declares `vision` gets the screenshot as an image part through the openai SDK (the fake
OpenAI server on loopback records the request); any other model is told a screenshot was attached."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.app import build_app
from bot.attachments import Upload
from bot.config import load_settings
from bot.conversations import Incoming
from bot.conversations.recording import RecordingSurface
from bot.store import Store
from tests.attachments.files import png
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.fakes.openai_server import FakeOpenAIServer, reply

ANSWER = "보내주신 화면을 확인했습니다. 결제 오류 화면이 맞네요."


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer(default_reply=reply(ANSWER)) as server:
        yield server


async def _ask_with_screenshot(
    store: Store, tmp_path: Path, server: FakeOpenAIServer, *, vision: bool
) -> tuple[RecordingSurface, bytes]:
    settings = load_settings(
        ARCA_DATA_DIR=str(tmp_path),
        ARCA_MODEL="vision-test",
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY="sk-test-vision",
        ARCA_MODEL_VISION="true" if vision else "false",
        edit_interval=0.0,
        llm_max_retries=0,
    )
    app = await build_app(settings, store=store, policy_index=EmptyPolicyIndex())
    actor = await app.conversations.resolve_actor("9001")
    surface = RecordingSurface()
    image = png(rgb=(10, 200, 30))
    incoming = Incoming(
        "console:vision", actor, "이 화면 좀 봐 주세요", attachments=[Upload.of_bytes("오류.png", image)]
    )
    await app.conversations.handle(incoming, surface)
    return surface, image


def _user_contents(server: FakeOpenAIServer) -> list[Any]:
    return [m["content"] for body in server.requests for m in body["messages"] if m["role"] == "user"]


async def test_a_vision_model_receives_the_screenshot_as_an_image_part(
    seeded_store: Store, tmp_path: Path, fake_openai: FakeOpenAIServer
) -> None:
    surface, image = await _ask_with_screenshot(seeded_store, tmp_path, fake_openai, vision=True)
    assert ANSWER in surface.all_text
    loop = fake_openai.requests[0]
    query = [m for m in loop["messages"] if m["role"] == "user"][-1]
    assert isinstance(query["content"], list)
    text, part = query["content"]
    assert text["type"] == "text" and text["text"].startswith("이 화면 좀 봐 주세요")
    assert "[the player attached a screenshot: 오류.png" in text["text"]
    assert part["type"] == "image_url"
    assert part["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(image).decode()


async def test_a_model_without_vision_is_told_a_screenshot_was_attached(
    seeded_store: Store, tmp_path: Path, fake_openai: FakeOpenAIServer
) -> None:
    surface, _ = await _ask_with_screenshot(seeded_store, tmp_path, fake_openai, vision=False)
    assert ANSWER in surface.all_text
    contents = _user_contents(fake_openai)
    assert all(isinstance(c, str) for c in contents)
    assert any("[the player attached a screenshot: 오류.png, " in c for c in contents)
    assert not any("base64" in c for c in contents)
